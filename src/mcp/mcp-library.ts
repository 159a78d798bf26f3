import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AppException } from '../common/errors';
import { AppConfig } from '../config/app-config';
import { ExecutionsService } from '../executions/request/executions.service';
import { executionView } from '../executions/request/execution-views';
import { InputRounds } from '../executions/request/input-rounds';
import { canUseTool, type Principal } from '../identity/principal';
import {
  PromptMetadata,
  type AskingContext,
  ResourceMetadata,
  type PromptDefinition,
  type PromptHandler,
  type PromptMessage,
  type ResourceContents,
  type ResourceDefinition,
  type ResourceHandler,
} from '../tools/sdk';
import { ProviderExplorer } from '../tools/provider-explorer';
import { toolDocumentation } from '../tools/tool-docs';
import { ToolCatalogue } from '../tools/tool-catalogue';
import { executionIdOfUri } from './mcp-execution-uri';
import { APP_VIEWS, viewVisibleTo } from './mcp-apps';
import { pageAfter } from './mcp-paging';
import { askingRound, type Answering, type InputRequiredResult } from './mcp-questions';
import { hideUnexpected, requireScope, type RequestFacts } from './mcp-replies';
import { PRODUCT_PROMPTS } from './product-prompts';

/** Caching hints (2026-07-28): what depends on the key is `private`; what may change at once is not kept. */
const LIST_HINT = { ttlMs: 60_000, cacheScope: 'private' } as const;
const SHARED_LIST_HINT = { ttlMs: 300_000, cacheScope: 'public' } as const;
const READ_HINT = { ttlMs: 0, cacheScope: 'private' } as const;

/** What the library serves, in the server capabilities of every revision. */
export const LIBRARY_CAPABILITIES = { resources: { listChanged: false }, prompts: { listChanged: false }, completions: {} };

const TOOL_DOCS = /^tos:\/\/tools\/([a-z0-9-]{1,64})\/docs$/;
const MAX_ARGUMENT_CHARS = 4096;
const MAX_COMPLETIONS = 100;

interface Template {
  definition: ResourceDefinition;
  pattern: RegExp;
  variables: string[];
  read(principal: Principal, uri: string, variables: Record<string, string>): Promise<ResourceContents[]>;
}

interface Prompt {
  definition: PromptDefinition;
  handler: PromptHandler;
}

/**
 * The resources and prompts MCP clients see, in every protocol revision: each tool's
 * documentation, the executions the key may see (a template), the product's prompts that chain
 * tools for common jobs, and whatever `@Resource` and `@Prompt` providers modules add.
 */
@Injectable()
export class McpLibrary implements OnApplicationBootstrap {
  private fixed = new Map<string, { definition: ResourceDefinition; handler: ResourceHandler }>();
  private templates: Template[] = [];
  private prompts = new Map<string, Prompt>();

  constructor(
    private readonly explorer: ProviderExplorer,
    private readonly tools: ToolCatalogue,
    private readonly executions: ExecutionsService,
    private readonly config: AppConfig,
    private readonly rounds: InputRounds,
  ) {}

  onApplicationBootstrap(): void {
    const { resources, prompts } = this.explorer.providers();
    for (const view of APP_VIEWS) this.fixed.set(view.uri, view.resource);
    for (const { definition, handler } of resources) {
      if (definition.uri) this.fixed.set(definition.uri, { definition, handler });
      else this.templates.push(template(definition, (_, uri, variables) => handler.read(uri, variables)));
    }
    this.templates.push(
      template(
        { uriTemplate: 'tos://executions/{execution_id}', name: 'execution', title: 'Execution', description: 'An execution of a tool: status, progress, result or error, timings (GET /v1/executions/{id}).', mimeType: 'application/json' },
        (principal, uri, { execution_id }) => this.readExecution(principal, uri, execution_id),
      ),
    );
    this.templates.sort((a, b) => (a.definition.uriTemplate! < b.definition.uriTemplate! ? -1 : 1));
    for (const prompt of PRODUCT_PROMPTS) this.prompts.set(prompt.definition.name, prompt);
    for (const { definition, handler } of prompts) {
      if (this.prompts.has(definition.name)) throw new Error(`Two prompts are named '${definition.name}'`);
      this.prompts.set(definition.name, { definition, handler });
    }
  }

  listResources(principal: Principal, cursor: string | undefined) {
    requireScope(principal, 'tools:read');
    const docs = this.tools
      .all()
      .filter(({ definition }) => canUseTool(principal, definition.id))
      .map(({ definition: d }) => ({ uri: `tos://tools/${d.id}/docs`, name: `${d.id}-docs`, title: `${d.name}: documentation`, description: `How to call ${d.id}: inputs, outputs, limits and examples.`, mimeType: 'text/markdown' }));
    const fixed = [...this.fixed.values()].filter(({ definition }) => viewVisibleTo(principal, definition.uri!));
    const all = [...fixed.map(({ definition }) => resourceView(definition)), ...docs].sort((a, b) => (a.uri < b.uri ? -1 : 1));
    const { page, nextCursor } = pageAfter(all, ({ uri }) => uri, cursor, this.config.MCP_PAGE_SIZE);
    return { resources: page, ...(nextCursor && { nextCursor }), ...LIST_HINT };
  }

  listTemplates(principal: Principal, cursor: string | undefined) {
    requireScope(principal, 'tools:read');
    const { page, nextCursor } = pageAfter(this.templates, ({ definition }) => definition.uriTemplate!, cursor, this.config.MCP_PAGE_SIZE);
    return { resourceTemplates: page.map(({ definition }) => templateView(definition)), ...(nextCursor && { nextCursor }), ...SHARED_LIST_HINT };
  }

  async read(principal: Principal, uri: string) {
    requireScope(principal, 'tools:read');
    return { contents: await this.contentsOf(principal, uri), ...READ_HINT };
  }

  listPrompts(principal: Principal, cursor: string | undefined) {
    requireScope(principal, 'tools:read');
    const all = [...this.prompts.values()].map(({ definition }) => definition).sort((a, b) => (a.name < b.name ? -1 : 1));
    const { page, nextCursor } = pageAfter(all, ({ name }) => name, cursor, this.config.MCP_PAGE_SIZE);
    return { prompts: page.map(promptView), ...(nextCursor && { nextCursor }), ...SHARED_LIST_HINT };
  }

  /** `answering` is what a 2026-07-28 request brings for the prompt's questions; without it the prompt cannot ask. */
  async getPrompt(
    principal: Principal,
    name: string,
    args: Record<string, unknown> | undefined,
    answering?: Answering,
  ): Promise<{ description: string; messages: PromptMessage[] } | InputRequiredResult> {
    requireScope(principal, 'tools:read');
    const prompt = this.prompts.get(name);
    if (!prompt) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`);
    const given: Record<string, string> = {};
    for (const argument of prompt.definition.arguments ?? []) {
      const value = args?.[argument.name];
      if (value === undefined) {
        if (argument.required) throw new McpError(ErrorCode.InvalidParams, `Prompt '${name}' needs the argument '${argument.name}'`);
        continue;
      }
      if (typeof value !== 'string' || value.length > MAX_ARGUMENT_CHARS) throw new McpError(ErrorCode.InvalidParams, `Argument '${argument.name}' must be a string of at most ${MAX_ARGUMENT_CHARS} characters`);
      given[argument.name] = value;
    }
    if (!answering) return { description: prompt.definition.description, messages: await prompt.handler.get(given, cannotAsk(name)) };
    const round = await askingRound(this.rounds, { keyId: principal.keyId, subject: `prompt:${name}`, input: given }, answering, (ctx) => prompt.handler.get(given, ctx));
    return 'resultType' in round ? round : { description: prompt.definition.description, messages: round.value };
  }

  /** completion/complete: the declared values of a prompt argument or template variable that start with what was typed. */
  complete(ref: { type: string; name?: string; uri?: string }, argument: { name: string; value: string }) {
    const offered =
      ref.type === 'ref/prompt'
        ? this.prompts.get(ref.name ?? '')?.definition.arguments?.find(({ name }) => name === argument.name)?.completions
        : this.templates.find(({ definition }) => definition.uriTemplate === ref.uri)?.definition.completions?.[argument.name];
    const matching = (offered ?? []).filter((value) => value.startsWith(argument.value));
    return { completion: { values: matching.slice(0, MAX_COMPLETIONS), total: matching.length, hasMore: matching.length > MAX_COMPLETIONS } };
  }

  private async contentsOf(principal: Principal, uri: string): Promise<ResourceContents[]> {
    const fixed = this.fixed.get(uri);
    if (fixed && viewVisibleTo(principal, uri)) return fixed.handler.read(uri, {});
    const docs = TOOL_DOCS.exec(uri);
    if (docs && this.tools.has(docs[1]) && canUseTool(principal, docs[1])) {
      return [{ uri, mimeType: 'text/markdown', text: toolDocumentation(this.tools.get(docs[1]).definition, this.config.publicUrl) }];
    }
    for (const candidate of this.templates) {
      const match = candidate.pattern.exec(uri);
      if (match) return candidate.read(principal, uri, Object.fromEntries(candidate.variables.map((name, i) => [name, decodeURIComponent(match[i + 1])])));
    }
    throw resourceNotFound(uri);
  }

  private async readExecution(principal: Principal, uri: string, id: string): Promise<ResourceContents[]> {
    if (executionIdOfUri(uri) === undefined) throw resourceNotFound(uri);
    requireScope(principal, 'executions:read');
    try {
      return [{ uri, mimeType: 'application/json', text: JSON.stringify(executionView(await this.executions.get(principal, id))) }];
    } catch (err) {
      // Another account's execution is as unknown as one that never was.
      if (err instanceof AppException && err.body.code === 'NOT_FOUND') throw resourceNotFound(uri);
      throw err;
    }
  }
}

/** A prompt got over a 2025 revision, whose clients cannot answer questions in a request's result. */
function cannotAsk(name: string): AskingContext {
  return {
    requestInput: () => Promise.reject(new McpError(ErrorCode.InvalidParams, `Prompt '${name}' asks its caller for input, which only MCP 2026-07-28 clients answer`)),
    canAsk: () => false,
  };
}

/** SEP-2164: an unknown resource is Invalid Params naming the uri. */
function resourceNotFound(uri: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Resource not found: ${uri}`, { uri });
}

/** `{name}` segments of a level-1 URI template as a matcher. */
function template(definition: ResourceDefinition, read: Template['read']): Template {
  const variables: string[] = [];
  const source = definition
    .uriTemplate!.split(/(\{[A-Za-z0-9_]+\})/)
    .map((part) => {
      const variable = /^\{([A-Za-z0-9_]+)\}$/.exec(part);
      if (!variable) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      variables.push(variable[1]);
      return '([^/?#]+)';
    })
    .join('');
  return { definition, pattern: new RegExp(`^${source}$`), variables, read };
}

function describe({ name, title, description, mimeType }: ResourceDefinition) {
  return { name, ...(title && { title }), description, ...(mimeType && { mimeType }) };
}

function resourceView(definition: ResourceDefinition) {
  return { uri: definition.uri!, ...describe(definition) };
}

function templateView(definition: ResourceDefinition) {
  return { uriTemplate: definition.uriTemplate!, ...describe(definition) };
}

function promptView({ name, title, description, arguments: args }: PromptDefinition) {
  return { name, ...(title && { title }), description, ...(args && { arguments: args.map(({ name: n, description: d, required }) => ({ name: n, description: d, required: required ?? false })) }) };
}

type Params = Record<string, any> | undefined;
/** `answering`: set on 2026-07-28, whose clients answer a prompt's questions. */
type LibraryMethod = (principal: Principal, params: Params, facts: RequestFacts, answering?: Answering) => Promise<unknown>;

/** The library's JSON-RPC methods, for whichever SDK Server registers them; unexpected failures are logged, not shown. */
export function libraryMethods(library: McpLibrary): Record<string, LibraryMethod> {
  const methods: Record<string, (principal: Principal, params: Params, answering?: Answering) => unknown> = {
    'resources/list': (principal, params) => library.listResources(principal, params?.cursor),
    'resources/templates/list': (principal, params) => library.listTemplates(principal, params?.cursor),
    'resources/read': (principal, params) => library.read(principal, String(params?.uri)),
    'prompts/list': (principal, params) => library.listPrompts(principal, params?.cursor),
    'prompts/get': (principal, params, answering) => library.getPrompt(principal, String(params?.name), params?.arguments, answering),
    'completion/complete': (_, params) => library.complete(params?.ref ?? {}, params?.argument ?? { name: '', value: '' }),
  };
  return Object.fromEntries(
    Object.entries(methods).map(([method, run]) => [
      method,
      async (principal: Principal, params: Params, facts: RequestFacts, answering?: Answering) => {
        try {
          return await run(principal, params, answering);
        } catch (err) {
          hideUnexpected(err, method, facts);
        }
      },
    ]),
  );
}
