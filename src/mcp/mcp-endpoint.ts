import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  CancelTaskRequestSchema,
  CompleteRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  ErrorCode,
  isJSONRPCRequest,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  McpError,
  type CallToolRequest,
  type CallToolResult,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { safeParse } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ProgressListener } from '../executions/engine/execution-runner';
import type { Principal } from '../identity/principal';
import { AdmissionGate } from '../limits/admission-gate';
import { McpAnswer } from './mcp-answer';
import { MCP_INSTRUCTIONS, MCP_SERVER_INFO } from './mcp-identity';
import { McpCancellations } from './mcp-cancellations';
import { McpHttpTransport, type McpCall } from './mcp-http-transport';
import { LEGACY_TASKS_CAPABILITY, McpLegacyTasks } from './mcp-legacy-tasks';
import { LIBRARY_CAPABILITIES, libraryMethods, McpLibrary } from './mcp-library';
import { McpModernEndpoint } from './mcp-modern-endpoint';
import { McpRoutes } from './mcp-route';
import { DatabaseOutages } from '../common/outages';
import { factsOf, hideUnexpected, RATE_LIMITED } from './mcp-replies';
import { callOf, CallContext, McpTools } from './mcp-tools';

/** The library's requests as the SDK v1 Server knows them. */
const LIBRARY_REQUESTS = [
  [ListResourcesRequestSchema, 'resources/list'],
  [ListResourceTemplatesRequestSchema, 'resources/templates/list'],
  [ReadResourceRequestSchema, 'resources/read'],
  [ListPromptsRequestSchema, 'prompts/list'],
  [GetPromptRequestSchema, 'prompts/get'],
  [CompleteRequestSchema, 'completion/complete'],
] as const;

/** The 2025-11-25 task methods as the SDK v1 Server knows them (it checks their params). */
const TASK_REQUESTS = [
  [GetTaskRequestSchema, 'tasks/get'],
  [ListTasksRequestSchema, 'tasks/list'],
  [CancelTaskRequestSchema, 'tasks/cancel'],
  [GetTaskPayloadRequestSchema, 'tasks/result'],
] as const;

type TaskParams = { taskId?: string; cursor?: string };

type CallToolParams = CallToolRequest['params'];

/** The SDK transport's limit on one POST's messages. */
const MAX_BATCH = 100;

/** What the request handlers need of the POST a request came in on. */
interface Post {
  principal: Principal;
  request: FastifyRequest;
  reply: FastifyReply;
  answer: McpAnswer;
}

/** An HTTP-level refusal, answered as the SDK transport answers it: a JSON-RPC error with id null. */
class TransportRefusal {
  constructor(
    readonly status: number,
    readonly code: number,
    readonly message: string,
  ) {}
}

/**
 * Stateless Streamable HTTP (MCP 2025-11-25 and the older versions the SDK negotiates): one SDK
 * Server per process serves every POST through McpHttpTransport, with the HTTP rules of the SDK's
 * own transport (Accept, Content-Type, MCP-Protocol-Version, batches). Answers are JSON, except a
 * tools/call that asked for progress, answered on an SSE stream carrying notifications/progress
 * before its result. Client capabilities from `initialize` are not kept: this server never sends
 * requests to clients. Tasks (2025-11-25) are executions: see McpLegacyTasks.
 */
@Injectable()
export class McpEndpoint implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(McpEndpoint.name);
  private readonly transport = new McpHttpTransport<Post>();
  private readonly routes = new McpRoutes();
  private readonly server: Server;

  constructor(
    private readonly tools: McpTools,
    private readonly cancellations: McpCancellations,
    private readonly modern: McpModernEndpoint,
    private readonly gate: AdmissionGate,
    private readonly outages: DatabaseOutages,
    library: McpLibrary,
    tasks: McpLegacyTasks,
  ) {
    this.server = new Server(MCP_SERVER_INFO, {
      capabilities: { tools: { listChanged: false }, ...LIBRARY_CAPABILITIES, tasks: LEGACY_TASKS_CAPABILITY },
      instructions: MCP_INSTRUCTIONS,
      jsonSchemaValidator: new AjvJsonSchemaValidator(), // for elicitation, which this server never sends
    });
    const methods = libraryMethods(library);
    for (const [schema, method] of LIBRARY_REQUESTS) {
      this.server.setRequestHandler(schema, ({ params }, extra) => {
        const { principal, request } = this.transport.call(extra.requestId).post;
        return methods[method](principal, params, factsOf(request, outages)) as never;
      });
    }
    this.server.setRequestHandler(ListToolsRequestSchema, ({ params }, extra) =>
      this.tools.list(this.transport.call(extra.requestId).post.principal, params?.cursor),
    );
    this.server.setRequestHandler(CallToolRequestSchema, ({ params }, extra) => {
      const progressToken = params._meta?.progressToken;
      const onProgress: ProgressListener | undefined =
        progressToken === undefined
          ? undefined
          : (progress, message) =>
              void extra
                .sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total: 100, ...(message !== null && { message }) } })
                .catch(() => undefined); // the stream is gone; the call itself notices
      return this.callTool(this.transport.call(extra.requestId), params, onProgress);
    });
    const taskMethods: Record<(typeof TASK_REQUESTS)[number][1], (principal: Principal, params: TaskParams, call: McpCall<Post>) => Promise<object>> = {
      'tasks/get': (principal, { taskId }) => tasks.get(principal, taskId!),
      'tasks/list': (principal, { cursor }) => tasks.list(principal, cursor),
      'tasks/cancel': (principal, { taskId }) => tasks.cancel(principal, taskId!),
      // Blocks until the task ends: stopped by notifications/cancelled or the client leaving, as a tools/call is.
      'tasks/result': (principal, { taskId }, call) => {
        const stop = this.stopOf(call);
        return tasks.result(principal, taskId!, stop.signal).finally(stop.release);
      },
    };
    for (const [schema, method] of TASK_REQUESTS) {
      this.server.setRequestHandler(schema, ({ params }, extra) => {
        const call = this.transport.call(extra.requestId);
        const { principal, request } = call.post;
        return taskMethods[method](principal, params ?? {}, call).catch((err: unknown) => hideUnexpected(err, method, factsOf(request, this.outages))) as never;
      });
    }
    this.server.onerror = (error) => this.logger.warn(`MCP protocol error: ${error.message}`);
  }

  /** A tools/call, from the Server's handler or the plain-call path: a CallToolResult, or a CreateTaskResult for a call with `task`. */
  private callTool({ post, clientId }: McpCall<Post>, params: CallToolParams, onProgress?: ProgressListener): Promise<CallToolResult> {
    let release = () => {};
    const context: CallContext = {
      ...callOf(post.request, post.reply, this.outages),
      signal: () => {
        const stop = this.stopOf({ post, clientId });
        release = stop.release;
        return stop.signal;
      },
      // The requested ttl is not taken: a task is kept for the account's retention, which its ttl says.
      tasks: { form: 'augmentation', requested: params.task !== undefined },
      ...(onProgress && { onProgress }),
    };
    // Never an InputRequiredResult: no `answering` on this revision.
    return (this.tools.call(post.principal, params.name, params.arguments, context) as Promise<CallToolResult>).finally(() => release());
  }

  /**
   * A tools/call without `task` or a progress token, answered as the Server answers it but without
   * its message round (its JSON-RPC type checks again, a second parse of the request, an abort
   * controller and the id remapping): the same request validation (else false: the Server answers
   * with its error), the same result validation, the same response or error.
   */
  private answeredPlainCall(message: JSONRPCRequest, post: Post): boolean {
    if (message.method !== 'tools/call') return false;
    const parsed = safeParse(CallToolRequestSchema, message);
    if (!parsed.success) return false;
    const { params } = parsed.data;
    if (params.task !== undefined || params._meta?.progressToken !== undefined) return false;
    const { id } = message;
    this.callTool({ post, clientId: id }, params)
      .then(
        (result) => {
          const valid = safeParse(CallToolResultSchema, result);
          if (valid.success) return post.answer.respond({ result: valid.data, jsonrpc: '2.0', id });
          const { message: text } = valid.error as Error;
          post.answer.respond(errorResponse(id, new McpError(ErrorCode.InvalidParams, `Invalid tools/call result: ${text}`)));
        },
        (err: unknown) => post.answer.respond(errorResponse(id, err as McpError)),
      )
      .catch((error: unknown) => this.logger.warn(`MCP protocol error: Failed to send response: ${String(error)}`));
    return true;
  }

  /** A signal for a request that waits: fires on its notifications/cancelled (from any process) or when its client goes away. */
  private stopOf({ post, clientId }: McpCall<Post>): { signal: AbortSignal; release: () => void } {
    const cancelled = this.cancellations.track(post.principal.keyId, clientId);
    const stopWatching = post.answer.whenGone(cancelled.abort);
    return {
      signal: cancelled.signal,
      release: () => {
        stopWatching();
        cancelled.release();
      },
    };
  }

  async onModuleInit(): Promise<void> {
    await this.server.connect(this.transport);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server.close();
  }

  /** The revision is resolved per POST, by the SDK v2's own classifier: see McpModernEndpoint. */
  async handle(principal: Principal, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const route = this.routes.routeOf(request);
    if (route.kind !== 'legacy') return this.modern.handle(principal, request, reply, route);
    const messages = readMessages(request);
    if (messages instanceof TransportRefusal) {
      const { status, code, message } = messages;
      await reply.status(status).type('application/json').send(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
      return;
    }
    const { admitted, refused } = await this.admitBatch(principal, request, messages);
    const requests = admitted.filter(isJSONRPCRequest);
    for (const message of admitted) if (!isJSONRPCRequest(message)) this.notified(principal, message);
    if (requests.length + refused.length === 0) {
      await reply.status(202).send();
      return;
    }
    const answer = new McpAnswer(reply, requests.length + refused.length, Array.isArray(request.body), requests.some(asksForProgress));
    for (const response of refused) answer.respond(response);
    const post: Post = { principal, request, reply, answer };
    const forServer: JSONRPCRequest[] = [];
    for (const message of requests) if (!this.answeredPlainCall(message, post)) forServer.push(message);
    this.transport.dispatch(forServer, post);
    await answer.done;
  }

  /**
   * Each message of a batch takes a slot of the key's request window, as if it came in its own
   * POST (the request-window guard counted the POST: its first message). The messages the window
   * cannot hold, in batch order, are not counted and not run: a request among them is answered
   * with a RATE_LIMITED error, a notification among them is dropped (it has no answer).
   */
  private async admitBatch(principal: Principal, request: FastifyRequest, messages: Message[]): Promise<{ admitted: Message[]; refused: JSONRPCMessage[] }> {
    if (messages.length <= 1) return { admitted: messages, refused: [] };
    const { admitted, refusal } = await this.gate.admitMore(principal, request, messages.length - 1);
    if (!refusal) return { admitted: messages, refused: [] };
    const error = { code: RATE_LIMITED, message: refusal.message, data: refusal.body };
    const refused = messages.slice(1 + admitted).filter(isJSONRPCRequest).map((message): JSONRPCMessage => ({ jsonrpc: '2.0', id: message.id, error }));
    return { admitted: messages.slice(0, 1 + admitted), refused };
  }

  /** A cancelled request usually runs in another POST, or another process: see McpCancellations. */
  private notified(principal: Principal, notification: JSONRPCNotification): void {
    if (notification.method !== 'notifications/cancelled') return this.transport.deliver(notification);
    const requestId = (notification.params as { requestId?: unknown } | undefined)?.requestId;
    if (typeof requestId === 'string' || typeof requestId === 'number') this.cancellations.cancel(principal.keyId, requestId);
  }
}

type Message = JSONRPCRequest | JSONRPCNotification;

/**
 * The POST's requests and notifications in batch order, or why the transport refuses them (the SDK
 * transport's rules). Responses are dropped: they would answer requests this server never sends.
 */
function readMessages(request: FastifyRequest): Message[] | TransportRefusal {
  const accept = request.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    return new TransportRefusal(406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
  }
  if (!isJsonContentType(request.headers['content-type'] ?? null)) {
    return new TransportRefusal(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
  }
  const body = request.body;
  const batch = Array.isArray(body) ? (body as unknown[]) : [body];
  if (batch.length === 0 || batch.length > MAX_BATCH) {
    return new TransportRefusal(400, ErrorCode.InvalidRequest, `Invalid Request: a batch holds 1 to ${MAX_BATCH} messages`);
  }
  const messages: Message[] = [];
  for (const message of batch) {
    // A request, the common case, is recognised without building the union's errors.
    if (isJSONRPCRequest(message)) {
      messages.push(message);
      continue;
    }
    const parsed = JSONRPCMessageSchema.safeParse(message);
    if (!parsed.success) return new TransportRefusal(400, ErrorCode.ParseError, 'Parse error: Invalid JSON-RPC message');
    if ('method' in parsed.data) messages.push(parsed.data as JSONRPCNotification);
  }
  const version = request.headers['mcp-protocol-version'];
  if (version !== undefined && !messages.some((message) => isJSONRPCRequest(message) && message.method === 'initialize') && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version))) {
    return new TransportRefusal(
      400,
      -32000,
      `Bad Request: Unsupported protocol version: ${String(version)} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
    );
  }
  return messages;
}

/** An error response as the SDK's Protocol words one. */
function errorResponse(id: RequestId, error: McpError): JSONRPCMessage {
  const code = Number.isSafeInteger(error.code) ? error.code : ErrorCode.InternalError;
  return { jsonrpc: '2.0', id, error: { code, message: error.message ?? 'Internal error', ...(error.data !== undefined && { data: error.data }) } };
}

function asksForProgress(request: JSONRPCRequest): boolean {
  return request.method === 'tools/call' && request.params?._meta?.progressToken !== undefined;
}
