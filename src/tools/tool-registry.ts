import { Injectable, OnModuleInit } from '@nestjs/common';
import { distance } from 'fastest-levenshtein';
import { AppException } from '../common/errors';
import { AppConfig } from '../config/app-config';
import { toolSourceOf } from './isolation/tool-source';
import { needsConstructorArguments, ProviderExplorer } from './provider-explorer';
import { ToolCatalogue, type RegisteredTool, type ToolFilter } from './tool-catalogue';
import { ToolCompiler, ToolDefinitionError } from './tool-compiler';

/**
 * The catalogue: every `@Tool` provider the explorer found, compiled at boot. A duplicate id, an
 * invalid definition or an isolated tool that cannot be isolated stops boot.
 */
@Injectable()
export class ToolRegistry extends ToolCatalogue implements OnModuleInit {
  private readonly tools = new Map<string, RegisteredTool>();
  readonly loadedAt = new Date().toUTCString();

  constructor(
    private readonly explorer: ProviderExplorer,
    private readonly compiler: ToolCompiler,
    private readonly appConfig: AppConfig,
  ) {
    super();
  }

  onModuleInit(): void {
    const owners = new Map<string, string>();
    const context = { isolate: this.appConfig.ISOLATE_TOOLS === 'true', environment: this.appConfig.environment, publicUrl: this.appConfig.publicUrl };
    for (const { definition, handler, className, metatype } of this.explorer.providers().tools) {
      const previous = owners.get(definition.id);
      if (previous) throw new ToolDefinitionError(`Duplicate tool id '${definition.id}': declared by ${previous} and ${className}`);
      owners.set(definition.id, className);
      const source = toolSourceOf(metatype);
      if (definition.isolated) {
        const refuse = (why: string) => new ToolDefinitionError(`Invalid tool definition '${definition.id}' (${className}): ${why}`);
        if (!source) throw refuse('an isolated tool must be exported by a *.tool.ts file loaded with loadToolClasses()');
        if (needsConstructorArguments(metatype)) throw refuse('an isolated tool runs in a worker thread, which builds the class without arguments: give every constructor parameter a default');
      }
      this.tools.set(definition.id, this.compiler.compile(definition, handler, { ...context, className, source }));
    }
  }

  has(id: string): boolean {
    return this.tools.has(id);
  }

  get(id: string): RegisteredTool {
    const tool = this.tools.get(id);
    if (!tool) throw this.unknownTool(id);
    return tool;
  }

  /** NOT_FOUND naming the closest ids, when some are close (a typo, a missing or extra word). */
  private unknownTool(id: string): AppException {
    const error = AppException.notFound('Tool', id);
    const close = closestIds(id, [...this.tools.keys()]);
    if (close.length > 0) {
      error.options.suggestion = `Did you mean ${close.map((name) => `'${name}'`).join(' or ')}? GET /v1/tools lists every tool`;
      error.options.details = { did_you_mean: close };
    }
    return error;
  }

  all(): RegisteredTool[] {
    return [...this.tools.values()];
  }

  list(filter: ToolFilter = {}): RegisteredTool[] {
    const needle = filter.search?.toLowerCase();
    return this.all().filter(({ definition: d }) =>
      (!filter.category || d.category === filter.category) &&
      (!filter.status || d.status === filter.status) &&
      (!filter.allowed || filter.allowed.has(d.id)) &&
      (!needle || d.name.toLowerCase().includes(needle) || d.description.toLowerCase().includes(needle) || d.id.includes(needle)),
    );
  }
}

/** At most three ids within a third of the asked id's length in edits, or holding it (or held by it) whole (3 characters at least); closest first. */
function closestIds(asked: string, ids: string[]): string[] {
  const needle = asked.toLowerCase().slice(0, 64);
  const bound = Math.max(2, Math.floor(needle.length / 3));
  return ids
    .map((id) => ({ id, cost: needle.length >= 3 && (id.includes(needle) || needle.includes(id)) ? 0 : distance(needle, id) }))
    .filter(({ cost }) => cost <= bound)
    .sort((a, b) => a.cost - b.cost || a.id.localeCompare(b.id))
    .slice(0, 3)
    .map(({ id }) => id);
}
