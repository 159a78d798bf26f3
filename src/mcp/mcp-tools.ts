import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { ErrorCode, McpError, type CallToolResult, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { canUseTool, type Principal } from '../identity/principal';
import type { Scope } from '../identity/scopes';
import { AppException, type ErrorBody } from '../common/errors';
import { AppConfig } from '../config/app-config';
import type { ProgressListener } from '../executions/engine/execution-runner';
import { invocationAnswer, InvocationService } from '../executions/request/invocation.service';
import { RegisteredTool, ToolCatalogue } from '../tools/tool-registry';
import { pageAfter } from './mcp-paging';

/** What a request handler knows of the HTTP request it serves. */
export interface RequestFacts {
  requestId: string;
  /** The request's logger: an unexpected error is logged there, not sent to the client. */
  log: { error(details: object, message: string): void };
}

/** What a tools/call brings besides its name and arguments. */
export interface CallContext extends RequestFacts {
  /** Made only if the tool runs; aborts on notifications/cancelled or when the client goes away (the execution is cancelled). */
  signal: () => AbortSignal;
  /** Set when the client sent a progressToken. */
  onProgress?: ProgressListener;
  /** False for `Cache-Control: no-cache`, as on REST. */
  cache: boolean;
  /** Milliseconds since the HTTP request arrived (the answer's timing). */
  elapsedMs(): number;
}

/**
 * The tool registry as MCP sees it: tools/list pages over a fixed order (by id) and tools/call
 * through the same validation, admission, cache and runner as REST invoke.
 */
@Injectable()
export class McpTools implements OnApplicationBootstrap {
  /** Built once, in name order: the catalogue is fixed after boot. */
  private catalogue: { name: string; tool: RegisteredTool; view: McpTool }[] = [];
  private readonly byName = new Map<string, RegisteredTool>();

  constructor(
    private readonly registry: ToolCatalogue,
    private readonly invocations: InvocationService,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    for (const tool of this.registry.all()) {
      const name = mcpName(tool);
      const previous = this.byName.get(name);
      if (previous) throw new Error(`Tools '${previous.definition.id}' and '${tool.definition.id}' have the same MCP name '${name}'`);
      this.byName.set(name, tool);
    }
    this.catalogue = [...this.byName].map(([name, tool]) => ({ name, tool, view: mcpToolView(name, tool) })).sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  list(principal: Principal, cursor: string | undefined): { tools: McpTool[]; nextCursor?: string } {
    requireScope(principal, 'tools:read');
    const visible = this.catalogue.filter(({ tool }) => canUseTool(principal, tool.definition.id));
    const { page, nextCursor } = pageAfter(visible, ({ name }) => name, cursor, this.config.MCP_PAGE_SIZE);
    return { tools: page.map(({ view }) => view), ...(nextCursor && { nextCursor }) };
  }

  async call(principal: Principal, name: string, args: Record<string, unknown> | undefined, context: CallContext): Promise<CallToolResult> {
    requireScope(principal, 'tools:invoke');
    const tool = this.byName.get(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    if (!canUseTool(principal, tool.definition.id)) throw new McpError(ErrorCode.InvalidParams, `This API key may not use tool '${name}'`);
    try {
      const input = tool.validateInput({ ...args });
      const outcome = await this.invocations.invokeSync({
        principal,
        tool,
        input,
        options: { async: false, cache: context.cache },
        requestId: context.requestId,
        callerGone: context.signal,
        onProgress: context.onProgress,
      });
      const { body } = invocationAnswer(outcome, context.elapsedMs());
      const { execution } = outcome;
      if (execution.status !== 'success') return { isError: true, content: [jsonText(body)], _meta: { execution_id: execution.id } };
      const { result, ...about } = body;
      return { structuredContent: execution.result!, content: contentOf(tool, execution.result!), _meta: about };
    } catch (err) {
      // Refused before it ran (limits, invalid arguments): an error result the model can act on.
      if (err instanceof AppException) return errorResult(err.body);
      hideUnexpected(err, 'tools/call', context);
    }
  }
}

function mcpName({ definition }: RegisteredTool): string {
  return definition.mcp?.name ?? definition.id;
}

/** The output as JSON text, or the content blocks the tool declared as its MCP content. */
function contentOf({ definition }: RegisteredTool, output: Record<string, unknown>): CallToolResult['content'] {
  const member = definition.mcp?.content;
  return member ? (output[member] as CallToolResult['content']) : [jsonText(output)];
}

/** name = the tool's MCP name; both schemas are the ones the REST validator compiled; effects become annotations. */
function mcpToolView(name: string, { definition: d, inputSchema, outputSchema }: RegisteredTool): McpTool {
  return {
    name,
    title: d.name,
    description: d.description,
    inputSchema: inputSchema as McpTool['inputSchema'],
    outputSchema: outputSchema as McpTool['outputSchema'],
    annotations: {
      title: d.name,
      readOnlyHint: d.effects === 'read',
      destructiveHint: d.effects === 'destructive',
      idempotentHint: d.idempotent,
      openWorldHint: d.open_world,
    },
    _meta: { category: d.category, version: d.version, status: d.status },
  };
}

/** The SDK would send an unexpected error's own message to the client, and it may name internals: log it, answer generically. */
export function hideUnexpected(err: unknown, method: string, facts: RequestFacts): never {
  if (err instanceof McpError) throw err;
  facts.log.error({ err }, `unexpected error in MCP ${method}`);
  throw new McpError(ErrorCode.InternalError, `An unexpected error occurred. Retry later; if it persists, contact support with request id ${facts.requestId}.`);
}

export function requireScope(principal: Principal, scope: Scope): void {
  if (!principal.scopes.has(scope)) throw new McpError(ErrorCode.InvalidRequest, `This API key lacks the '${scope}' scope`);
}

function jsonText(value: unknown): { type: 'text'; text: string } {
  return { type: 'text', text: JSON.stringify(value) };
}

function errorResult(error: ErrorBody): CallToolResult {
  return { isError: true, content: [jsonText({ error })] };
}
