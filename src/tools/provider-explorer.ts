import { Injectable, Logger } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import {
  PromptMetadata,
  ResourceMetadata,
  ToolMetadata,
  type PromptDefinition,
  type PromptHandler,
  type ResourceDefinition,
  type ResourceHandler,
  type ToolDefinition,
  type ToolHandler,
} from './sdk';

/** A provider found with its decorator's definition. */
export interface Found<D, H> {
  definition: D;
  handler: H;
  className: string;
  /** The provider's class (a tool's worker thread loads the same class by file). */
  metatype: object;
}

export interface ExtensionProviders {
  tools: Found<ToolDefinition, ToolHandler>[];
  resources: Found<ResourceDefinition, ResourceHandler>[];
  prompts: Found<PromptDefinition, PromptHandler>[];
}

/**
 * Every `@Tool`, `@Resource` and `@Prompt` provider of every module, found by one walk of the
 * providers (as @nestjs/schedule's explorer finds its jobs). A provider that is not static (request-
 * or transient-scoped, or depending on one) has no single instance to serve: it is skipped with a
 * warning naming it.
 */
@Injectable()
export class ProviderExplorer {
  private readonly logger = new Logger(ProviderExplorer.name);
  private found?: ExtensionProviders;

  constructor(private readonly discovery: DiscoveryService) {}

  /** What the walk found; it runs once, on the first call (providers exist by then: call it from a lifecycle hook). */
  providers(): ExtensionProviders {
    this.found ??= this.explore();
    return this.found;
  }

  private explore(): ExtensionProviders {
    const found: ExtensionProviders = { tools: [], resources: [], prompts: [] };
    for (const wrapper of this.discovery.getProviders()) {
      const tool = this.discovery.getMetadataByDecorator(ToolMetadata, wrapper);
      const resource = this.discovery.getMetadataByDecorator(ResourceMetadata, wrapper);
      const prompt = this.discovery.getMetadataByDecorator(PromptMetadata, wrapper);
      if (!tool && !resource && !prompt) continue;
      const className = wrapper.metatype?.name ?? String(wrapper.token);
      if (!wrapper.isDependencyTreeStatic() || !wrapper.metatype) {
        this.logger.warn(`${className} is not a static provider (request- or transient-scoped): its @Tool, @Resource or @Prompt is not served`);
        continue;
      }
      const entry = <D, H>(definition: D): Found<D, H> => ({ definition, handler: wrapper.instance as H, className, metatype: wrapper.metatype! });
      if (tool) found.tools.push(entry(tool));
      if (resource) found.resources.push(entry(resource));
      if (prompt) found.prompts.push(entry(prompt));
    }
    return found;
  }
}

/**
 * Whether a class cannot be built without arguments, as a worker thread (outside Nest) builds it:
 * a constructor parameter without a default (`Function.length` counts the parameters before the
 * first default). A parameter with a default (`clients = new DockerClients()`) is injected by Nest
 * and made by the class itself in the thread.
 */
export function needsConstructorArguments(metatype: object): boolean {
  return typeof metatype === 'function' && metatype.length > 0;
}
