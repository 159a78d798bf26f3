import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { createMcpHandler, Server, type CallToolResult, type ListToolsResult, type McpRequestContext, type RequestMethod } from '@modelcontextprotocol/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { z } from 'zod';
import { callerGone } from '../common/caller-gone';
import type { Principal } from '../identity/principal';
import { asksNoCache } from '../executions/request/invoke-request';
import { MCP_INSTRUCTIONS, MCP_SERVER_INFO } from './mcp-identity';
import { LIBRARY_CAPABILITIES, libraryMethods, McpLibrary } from './mcp-library';
import { hideUnexpected } from './mcp-replies';
import { McpTasks, missingTasksExtension, TASKS_EXTENSION } from './mcp-tasks';
import { answerableMethods, McpTools, type CallContext } from './mcp-tools';

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
  private readonly handler = createMcpHandler((context) => this.serverFor(context), {
    legacy: 'reject',
    onerror: (error) => this.logger.debug(`MCP 2026-07-28 request refused: ${error.message}`),
  });

  private readonly methods: ReturnType<typeof libraryMethods>;

  constructor(
    private readonly tools: McpTools,
    private readonly tasks: McpTasks,
    library: McpLibrary,
  ) {
    this.methods = libraryMethods(library);
  }

  async handle(principal: Principal, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const caller: Caller = { principal, request, reply };
    const response = await this.handler.fetch(webRequest(request, callerGone(reply)), {
      parsedBody: request.body,
      authInfo: { token: '', clientId: principal.keyId, scopes: [...principal.scopes], extra: { caller } },
    });
    reply.status(response.status);
    response.headers.forEach((value, name) => void reply.header(name, value));
    if (!response.body) return void (await reply.send());
    await reply.send(Readable.fromWeb(response.body as NodeReadableStream));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.handler.close();
  }

  private serverFor(context: McpRequestContext): Server {
    const { principal, request, reply } = (context.authInfo?.extra as { caller: Caller }).caller;
    const server = new Server(MCP_SERVER_INFO, {
      capabilities: { tools: { listChanged: false }, ...LIBRARY_CAPABILITIES, extensions: { [TASKS_EXTENSION]: {} } },
      instructions: MCP_INSTRUCTIONS,
    });
    const facts = { requestId: request.id, log: request.log };
    for (const [method, handler] of Object.entries(this.methods)) server.setRequestHandler(method as RequestMethod, ({ params }) => handler(principal, params, facts) as never);
    // McpTools speaks the SDK v1 types, which name the same JSON less narrowly.
    server.setRequestHandler('tools/list', ({ params }) => ({ ...(this.tools.list(principal, params?.cursor) as ListToolsResult), ...TOOLS_LIST_CACHE }));
    server.setRequestHandler('tools/call', ({ params }, ctx) => {
      const progressToken = params._meta?.progressToken;
      const capabilities = clientCapabilities(ctx);
      const call: CallContext = {
        signal: () => ctx.mcpReq.signal,
        cache: !asksNoCache(request.headers['cache-control']),
        ...facts,
        elapsedMs: () => reply.elapsedTime,
        tasks: declaresTasks(ctx),
        answering: { responses: ctx.mcpReq.inputResponses, state: ctx.mcpReq.requestState<string>(), capabilities, methods: answerableMethods(capabilities) },
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
    taskMethod('tasks/get', (taskId) => this.tasks.get(principal, taskId));
    taskMethod('tasks/cancel', (taskId) => this.tasks.cancel(principal, taskId));
    taskMethod('tasks/update', (taskId, inputResponses) => this.tasks.update(principal, taskId, inputResponses));
    return server;
  }
}

const TASK_PARAMS = z.looseObject({ taskId: z.string().min(1).max(128) });

type RequestContext = { mcpReq: { envelope?: object } };

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
