import { distance } from 'fastest-levenshtein';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { AppConfig } from '../config/app-config';
import { AppException } from '../common/errors';
import { inputErrorToException } from './input-errors';
import { ToolSource, toolSourceOf } from './isolation/tool-source';
import { ToolDefinition, ToolHandler, ToolMetadata, type ToolSettingValue } from './sdk';
import { readToolSettings } from './tool-settings';
import { MAX_OUTPUT_DEPTH, unstorableProblem } from '../common/json-limits';
import { valueAt } from '../common/dotted-path';
import { definitionProblems, inputRules, inputSchema, JsonSchema, outputSchema } from './tool-schema';
import { toolDetailView, toolSummaryView } from './tool-views';

export const DEFAULT_TIMEOUT_SECONDS = 30;
export const DEFAULT_RATE_LIMIT = 60;
export const DEFAULT_CACHE_TTL_SECONDS = 3600;

/** A tool's definition with every default filled in (`mcp` has none: absent means the id and JSON text). */
export type ResolvedDefinition = Required<Omit<ToolDefinition, 'mcp' | 'task_support'>> & Pick<ToolDefinition, 'mcp' | 'task_support'>;

export interface RegisteredTool {
  definition: ResolvedDefinition;
  handler: ToolHandler;
  /** Set for `isolated` tools: the file a worker thread loads the class from. */
  source?: ToolSource;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  /** The tool's declared settings, read from the environment and typed once at boot. */
  config: Readonly<Record<string, ToolSettingValue | undefined>>;
  /** Names of the declared settings marked `secret`: an account may hold its own value of each. */
  secretSettings: readonly string[];
  summary: Record<string, unknown>;
  detail: Record<string, unknown>;
  /** Validates in place: applies defaults, strips unknown members; throws the errors of docs/API.md#which-400. */
  validateInput(input: Record<string, unknown>): Record<string, unknown>;
  /** Why a result breaks the declared outputs, or null when it conforms. */
  outputProblem(result: unknown): string | null;
}

export interface ToolFilter {
  category?: string;
  status?: string;
  search?: string;
  /** Only these ids (a key's tool restriction); null = all. */
  allowed?: ReadonlySet<string> | null;
}

// strictRequired would refuse `required` in a rule's subschema (`anyOf: [{ required: ['phone'] }]`), which is valid 2020-12: definitionProblems checks those names instead.
const AJV_OPTIONS = { allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true, coerceTypes: false } as const;

/**
 * A 2020-12 validator. Ajv 8 resolves `$anchor` but its strict mode calls it unknown inside a
 * `$ref`'d schema, so it is declared; `x-mcp-header` is an annotation with nothing to check.
 */
function validator(options: ConstructorParameters<typeof Ajv2020>[0]): Ajv2020 {
  return addFormats(new Ajv2020(options)).addKeyword('$anchor').addKeyword('x-mcp-header');
}

export class ToolDefinitionError extends Error {
  override name = 'ToolDefinitionError';
}

/** The registered tools, read-only: all that other modules may know of the registry (its injection token too). */
export abstract class ToolCatalogue {
  abstract has(id: string): boolean;
  abstract get(id: string): RegisteredTool;
  abstract all(): RegisteredTool[];
  abstract list(filter?: ToolFilter): RegisteredTool[];
}

/**
 * Every `@Tool` provider of every module, found at boot with Nest's DiscoveryService.
 * Schemas are compiled once here; a duplicate id or an invalid definition stops boot.
 */
@Injectable()
export class ToolRegistry extends ToolCatalogue implements OnModuleInit {
  private readonly tools = new Map<string, RegisteredTool>();
  /** HTTP date the catalogue was built: it changes only with a deploy (Last-Modified of tool reads). */
  readonly loadedAt = new Date().toUTCString();
  /** Inputs are normalised in place (defaults, unknown members dropped); outputs only checked. */
  private readonly inputAjv = validator({ ...AJV_OPTIONS, useDefaults: true, removeAdditional: true });
  private readonly outputAjv = validator(AJV_OPTIONS);

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly appConfig: AppConfig,
  ) {
    super();
  }

  onModuleInit(): void {
    const owners = new Map<string, string>();
    for (const wrapper of this.discovery.getProviders({ metadataKey: ToolMetadata.KEY })) {
      const definition = this.discovery.getMetadataByDecorator(ToolMetadata, wrapper);
      const className = wrapper.metatype?.name ?? String(wrapper.token);
      if (!definition) continue;
      const previous = owners.get(definition.id);
      if (previous) throw new ToolDefinitionError(`Duplicate tool id '${definition.id}': declared by ${previous} and ${className}`);
      owners.set(definition.id, className);
      const source = wrapper.metatype ? toolSourceOf(wrapper.metatype) : undefined;
      if (definition.isolated && !source) {
        throw new ToolDefinitionError(`Invalid tool definition '${definition.id}' (${className}): an isolated tool must be exported by a *.tool.ts file loaded with loadToolClasses()`);
      }
      this.tools.set(definition.id, this.register(definition, wrapper.instance as ToolHandler, className, source));
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

  /**
   * Checks and compiles one tool; public for the SDK test kit, which runs a tool without Nest
   * (and without `source`: there an isolated tool runs in the test's own thread).
   */
  register(raw: ToolDefinition, handler: ToolHandler, className: string, source?: ToolSource): RegisteredTool {
    const fail = (problem: string) => new ToolDefinitionError(`Invalid tool definition '${raw?.id}' (${className}): ${problem}`);
    if (typeof handler?.execute !== 'function') throw fail('the class must implement execute(input, ctx)');
    const problems = definitionProblems(raw);
    if (problems.length > 0) throw fail(problems.join('; '));

    const effects = raw.effects ?? (raw.cacheable ? 'read' : 'write');
    const definition: ResolvedDefinition = {
      status: 'ready',
      timeout: DEFAULT_TIMEOUT_SECONDS,
      rate_limit: DEFAULT_RATE_LIMIT,
      cacheable: false,
      cache_ttl: DEFAULT_CACHE_TTL_SECONDS,
      effects,
      idempotent: effects === 'read',
      open_world: false,
      config: {},
      isolated: false,
      ...raw,
    };
    const inSchema = inputSchema(definition);
    const outSchema = outputSchema(definition);
    let validateIn: ValidateFunction;
    let validateOut: ValidateFunction;
    try {
      validateIn = this.inputAjv.compile(inSchema);
      validateOut = this.outputAjv.compile(outSchema);
    } catch (err) {
      throw fail(`schema does not compile: ${(err as Error).message}`);
    }

    const validateInput = (input: Record<string, unknown>) => {
      if (!validateIn(input)) throw inputErrorToException(validateIn.errors ?? [], input, definition.input.properties, inputRules(definition.input));
      return input;
    };
    const outputProblem = (result: unknown) => {
      const unstorable = unstorableProblem(result, MAX_OUTPUT_DEPTH);
      if (unstorable) return `result cannot be stored: ${unstorable}`;
      return validateOut(result) ? null : this.outputAjv.errorsText(validateOut.errors, { dataVar: 'result' });
    };

    for (const example of definition.examples) {
      const input = structuredClone(example.input);
      if (!validateIn(input)) throw fail(`example '${example.name}' input: ${this.inputAjv.errorsText(validateIn.errors)}`);
      const problem = outputProblem(example.output);
      if (problem) throw fail(`example '${example.name}' output: ${problem}`);
      const unknownPath = example.varies?.find((path) => !valueAt(example.output, path).found);
      if (unknownPath) throw fail(`example '${example.name}' varies: '${unknownPath}' is not in its output`);
    }

    const readSettings = () => {
      try {
        return readToolSettings(definition.id, definition.config, this.appConfig.environment);
      } catch (err) {
        throw fail((err as Error).message);
      }
    };
    const documentation = `${this.appConfig.publicUrl}/v1/tools/${definition.id}/docs`;
    return {
      definition,
      handler,
      ...(definition.isolated && this.appConfig.ISOLATE_TOOLS === 'true' && { source }),
      inputSchema: inSchema,
      outputSchema: outSchema,
      config: readSettings(),
      secretSettings: Object.entries(definition.config).filter(([, setting]) => setting.secret).map(([name]) => name),
      summary: toolSummaryView(definition),
      detail: toolDetailView(definition, documentation),
      validateInput,
      outputProblem,
    };
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
