import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import {
  CLIENT_CAPABILITIES_META_KEY,
  createMcpHandler,
  SERVER_INFO_META_KEY,
  Server,
  type CallToolResult,
  type InboundClassificationOutcome,
  type ListToolsResult,
  type McpRequestContext,
  type RequestMethod,
} from '@modelcontextprotocol/server';
import { ErrorCode, type McpError } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { z } from 'zod';
import { callerGone } from '../common/caller-gone';
import type { Principal } from '../identity/principal';
import type { Scope } from '../identity/scopes';
import { MCP_INSTRUCTIONS, MCP_SERVER_INFO } from './mcp-identity';
import { libraryMethods, McpLibrary } from './mcp-library';
import { DatabaseOutages } from '../common/outages';
import { factsOf, HEADER_MISMATCH, hideUnexpected, MISSING_REQUIRED_CLIENT_CAPABILITY, requireScope } from './mcp-replies';
import { extensionTask, McpTasks, missingTasksExtension, TASKS_EXTENSION } from './mcp-tasks';
import { answerableMethods, type Answering } from './mcp-questions';
import { callOf, McpTools, type CallContext } from './mcp-tools';
import { McpListenBus } from './mcp-listen-bus';
import { LiveUpdates } from '../executions/live/live-updates';
import { LIMITS } from '../executions/live/live-protocol';
import { MODERN_CAPABILITIES } from './mcp-server-card';
import { CatalogueChanges } from '../tools/catalogue-changes';

/**
 * How long a client may reuse a tools/list answer. `private`: the list depends on the key (its
 * `tool_ids` allowlist), so no shared cache may hand it to another caller.
 */
const TOOLS_LIST_CACHE = { ttlMs: 60_000, cacheScope: 'private' } as const;

/** What the POST brings that a request handler needs; rides through the SDK as `authInfo.extra`. */
interface Caller {
  principal: Principal;
  request: FastifyRequest;
  reply: FastifyReply;
}

/**
 * MCP 2026-07-28 (stateless: no `initialize`, the protocol version and client capabilities in
 * each request's `_meta`, `server/discover`, routing headers) on the official SDK v2: its
 * validation ladder, era gate and response shaping, with a Server per request made from the same
 * McpTools the 2025 revisions use. McpEndpoint sends here every POST the SDK's own classifier
 * does not call legacy.
 */
@Injectable()
export class McpModernEndpoint implements OnApplicationShutdown {
  private readonly logger = new Logger(McpModernEndpoint.name);
  private readonly bus: McpListenBus;
  private readonly handler: ReturnType<typeof createMcpHandler>;
  private readonly methods: ReturnType<typeof libraryMethods>;

  constructor(
    private readonly tools: McpTools,
    private readonly tasks: McpTasks,
    private readonly outages: DatabaseOutages,
    library: McpLibrary,
    changes: CatalogueChanges,
    private readonly live: LiveUpdates,
  ) {
    this.bus = new McpListenBus(live);
    this.handler = createMcpHandler((context) => this.serverFor(context), {
      legacy: 'reject',
      bus: this.bus,
      onerror: (error) => this.logger.debug(`MCP 2026-07-28 request refused: ${error.message}`),
    });
    this.methods = libraryMethods(library);
    changes.onChange((change) => this.bus.catalogueChanged(change));
  }

  /** `route` is the SDK's classification of the POST (its validation ladder), which McpEndpoint made to route it here. */
  async handle(principal: Principal, request: FastifyRequest, reply: FastifyReply, route: Exclude<InboundClassificationOutcome, { kind: 'legacy' }>): Promise<void> {
    if (route.kind === 'modern' && route.messageKind === 'request' && route.message.method === 'tools/call') {
      const { id, params } = route.message as unknown as { id: string | number; params?: { name?: unknown; arguments?: Record<string, unknown> } };
      const mismatch = this.tools.paramHeaderMismatch(params?.name, params?.arguments, (name) => headerValue(request, name));
      // As the SDK answers its own header cross-checks: 400, -32020 HeaderMismatch naming the pair.
      if (mismatch) {
        const error = { code: HEADER_MISMATCH, message: `Bad Request: the request headers and body disagree: ${mismatch.body}`, data: { mismatch } };
        return void (await reply.status(400).type('application/json').send(JSON.stringify({ jsonrpc: '2.0', id, error })));
      }
    }
    let followed: unknown[] = [];
    if (route.kind === 'modern' && route.messageKind === 'request' && route.message.method === 'subscriptions/listen') {
      followed = resourceSubscriptions(route.message.params);
      const refusal = this.listenRefusal(principal, followed);
      if (refusal) return void (await reply.status(200).type('application/json').send(JSON.stringify({ jsonrpc: '2.0', id: route.message.id, error: refusal })));
    }
    const plain = plainToolCall(route, request);
    if (plain) return this.callTool(principal, plain, request, reply);
    const caller: Caller = { principal, request, reply };
    // As the principal: a subscriptions/listen stream this opens hears that principal's catalogue changes and executions.
    const response = await this.bus.as(principal, followed, () =>
      this.handler.fetch(webRequest(request, callerGone(reply)), {
        parsedBody: request.body,
        authInfo: { token: '', clientId: principal.keyId, scopes: [...principal.scopes], extra: { caller } },
      }),
    );
    reply.status(response.status);
    response.headers.forEach((value, name) => void reply.header(name, value));
    if (!response.body) return void (await reply.send());
    await reply.send(Readable.fromWeb(response.body as NodeReadableStream));
  }

  /**
   * The SDK serves the stream itself (no handler of ours to check the scope): the catalogue it tells
   * of is a listing; following executions is reading them, as a WebSocket of the key's share.
   */
  private listenRefusal(principal: Principal, followed: unknown[]): { code: number; message: string } | undefined {
    const refusal = scopeRefusal(principal, 'tools:read') ?? (followed.length > 0 ? scopeRefusal(principal, 'executions:read') : undefined);
    if (refusal || followed.length === 0) return refusal;
    if (followed.length > MAX_FOLLOWED) return { code: ErrorCode.InvalidParams, message: `A stream follows at most ${MAX_FOLLOWED} resources; got ${followed.length}` };
    if (!this.live.hasRoom(principal.keyId)) {
      return { code: ErrorCode.InvalidRequest, message: `This key already holds ${LIMITS.MAX_SOCKETS_PER_KEY} live connections (GET /v1/ws sockets and streams following executions); close one first` };
    }
    return undefined;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.handler.close();
  }

  /**
   * The common case, answered without a Server per request: a tools/call the SDK's ladder passed
   * (envelope, version, headers, params), with no progress stream, no answers to questions and no
   * tasks. The answer is the one the SDK gives: the result with `resultType` and the server's
   * identity in `_meta`, or the error in band (HTTP 200; 400 for -32021, as the SDK maps it).
   */
  private async callTool(principal: Principal, message: PlainToolCall, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const { id, params } = message;
    const call: CallContext = {
      ...callOf(request, reply, this.outages),
      signal: () => callerGone(reply),
      answering: { methods: answerableMethods(params._meta[CLIENT_CAPABILITIES_META_KEY] ?? {}) },
    };
    let status = 200;
    let answer: Record<string, unknown>;
    try {
      // A CallToolResult (no resultType: it completed) or an InputRequiredResult (never a task: no tasks here).
      const result: { resultType?: string; _meta?: object } = await this.tools.call(principal, params.name, params.arguments, call);
      answer = { result: { ...result, resultType: result.resultType ?? 'complete', _meta: { ...result._meta, [SERVER_INFO_META_KEY]: MCP_SERVER_INFO } } };
    } catch (err) {
      // McpTools.call throws McpErrors only: anything unexpected was logged and made one.
      const { code, message: text, data } = err as McpError;
      if (code === MISSING_REQUIRED_CLIENT_CAPABILITY) status = 400;
      answer = { error: { code, message: text, ...(data !== undefined && { data }) } };
    }
    // Not awaited: awaiting a Fastify reply watches its stream until it finishes (listeners on every
    // answer) and nothing here waits for that.
    void reply.status(status).type('application/json').send(JSON.stringify({ jsonrpc: '2.0', id, ...answer }));
  }

  private serverFor(context: McpRequestContext): Server {
    const { principal, request, reply } = (context.authInfo?.extra as { caller: Caller }).caller;
    const server = new Server(MCP_SERVER_INFO, {
      capabilities: MODERN_CAPABILITIES,
      instructions: MCP_INSTRUCTIONS,
    });
    const facts = factsOf(request, this.outages);
    for (const [method, handler] of Object.entries(this.methods)) {
      server.setRequestHandler(method as RequestMethod, ({ params }, ctx) => handler(principal, params, facts, answeringOf(ctx)) as never);
    }
    // McpTools speaks the SDK v1 types, which name the same JSON less narrowly.
    server.setRequestHandler('tools/list', async ({ params }) => ({ ...((await this.tools.list(principal, params?.cursor)) as ListToolsResult), ...TOOLS_LIST_CACHE }));
    server.setRequestHandler('tools/call', ({ params }, ctx) => {
      const progressToken = params._meta?.progressToken;
      const call: CallContext = {
        ...callOf(request, reply, this.outages),
        signal: () => ctx.mcpReq.signal,
        ...(declaresTasks(ctx) && { tasks: { form: 'extension' } }),
        answering: answeringOf(ctx),
        ...(progressToken !== undefined && {
          onProgress: (progress, message) =>
            void ctx.mcpReq
              .notify({ method: 'notifications/progress', params: { progressToken, progress, total: 100, ...(message !== null && { message }) } })
              .catch(() => undefined), // the stream is gone; the call itself notices
        }),
      };
      return this.tools.call(principal, params.name, params.arguments, call) as Promise<CallToolResult>;
    });
    // The Tasks extension's methods, for clients that declare it on the request.
    const taskMethod = (method: string, answer: (taskId: string, inputResponses: Record<string, unknown>) => Promise<object>) =>
      server.setRequestHandler(method, { params: TASK_PARAMS }, ({ taskId }, ctx) => {
        if (!declaresTasks(ctx)) throw missingTasksExtension();
        // The SDK lifts a tasks/update's inputResponses out of its params.
        return answer(taskId, ctx.mcpReq.inputResponses ?? {}).catch((err: unknown) => hideUnexpected(err, method, facts)) as never;
      });
    taskMethod('tasks/get', async (taskId) => extensionTask(await this.tasks.read(principal, taskId, 'any')));
    // Idempotent: a task that already ended is acknowledged as well (its status says how it ended).
    taskMethod('tasks/cancel', async (taskId) => {
      await this.tasks.cancel(principal, taskId, 'any');
      return {};
    });
    taskMethod('tasks/update', async (taskId, inputResponses) => {
      await this.tasks.answer(principal, taskId, inputResponses);
      return {};
    });
    return server;
  }
}

/** The JSON-RPC error of a principal lacking `scope`, or undefined when it holds it. */
/** The resources one stream may follow: a WebSocket's subscriptions (docs/executions.md#live-updates-over-websocket). */
const MAX_FOLLOWED = LIMITS.SUBSCRIPTIONS_PER_SOCKET;

/** The resource URIs a `subscriptions/listen` request asks to follow (the SDK checks the shape). */
function resourceSubscriptions(params: unknown): unknown[] {
  const uris = (params as { notifications?: { resourceSubscriptions?: unknown } } | undefined)?.notifications?.resourceSubscriptions;
  return Array.isArray(uris) ? uris : [];
}

function scopeRefusal(principal: Principal, scope: Scope): { code: number; message: string } | undefined {
  try {
    requireScope(principal, scope);
    return undefined;
  } catch (err) {
    const { code, message } = err as McpError;
    return { code, message };
  }
}

/** A request header's (first) value, by its lowercase name. */
export function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

const TASK_PARAMS = z.looseObject({ taskId: z.string().min(1).max(128) });

/** A tools/call as the ladder proved it (name, optional arguments, the `_meta` envelope). */
interface PlainToolCall {
  id: string | number;
  params: { name: string; arguments?: Record<string, unknown>; _meta: Record<string, Record<string, unknown> | undefined> };
}

/**
 * The POST as a tools/call the fast path answers exactly as the SDK would: one the ladder passed,
 * with the standard headers present and Mcp-Name naming the tool as is (the SDK's entry rejects
 * anything else, so it goes there), not asking for progress, bringing no answers, from a client
 * that does not take tasks (the SDK shapes task results), accepting JSON.
 */
function plainToolCall(route: Exclude<InboundClassificationOutcome, { kind: 'legacy' }>, request: FastifyRequest): PlainToolCall | undefined {
  if (route.kind !== 'modern' || route.messageKind !== 'request' || route.message.method !== 'tools/call') return undefined;
  const message = route.message as unknown as PlainToolCall;
  const { params } = message;
  const meta = params._meta as Record<string, unknown>;
  if (meta.progressToken !== undefined || 'inputResponses' in params || 'requestState' in params) return undefined;
  if (params._meta[CLIENT_CAPABILITIES_META_KEY]?.extensions !== undefined) return undefined;
  if (!(request.headers.accept ?? '').includes('application/json')) return undefined;
  const named = headerValue(request, 'mcp-name')?.replace(/^[ \t]+|[ \t]+$/g, '');
  if (headerValue(request, 'mcp-protocol-version') === undefined || headerValue(request, 'mcp-method') === undefined || named !== params.name) return undefined;
  return message;
}

type RequestContext = { mcpReq: { envelope?: object; inputResponses?: Record<string, unknown>; requestState<T>(): T | undefined } };

/** What the request brings for the questions a tool or prompt asks. */
function answeringOf(ctx: RequestContext): Answering {
  return { responses: ctx.mcpReq.inputResponses, state: ctx.mcpReq.requestState<string>(), methods: answerableMethods(clientCapabilities(ctx)) };
}

/** The client capabilities the request declared in its `_meta` envelope. */
function clientCapabilities(ctx: RequestContext): Record<string, unknown> {
  const envelope = ctx.mcpReq.envelope as { 'io.modelcontextprotocol/clientCapabilities'?: Record<string, unknown> } | undefined;
  return envelope?.['io.modelcontextprotocol/clientCapabilities'] ?? {};
}

/** Whether the request's client capabilities include the Tasks extension. */
function declaresTasks(ctx: RequestContext): boolean {
  return (clientCapabilities(ctx).extensions as Record<string, unknown> | undefined)?.[TASKS_EXTENSION] !== undefined;
}

/** The Fastify request as the web Request the SDK handler reads (headers, and the body it already parsed). */
function webRequest(request: FastifyRequest, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  // The URL is not read (routing is ours) and a Host header may be anything: keep it out of it.
  return new Request(`http://localhost${request.url}`, { method: 'POST', headers, body: JSON.stringify(request.body), signal });
}
