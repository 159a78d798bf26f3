import { Injectable } from '@nestjs/common';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, CancelledNotificationSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { Principal } from '../auth/principal';
import { callerGone } from '../common/caller-gone';
import { openEventStream } from '../common/event-stream';
import { asksNoCache } from '../executions/invoke-request';
import { McpCancellations } from './mcp-cancellations';
import { CallContext, McpTools } from './mcp-tools';

const SERVER_INFO = { name: 'tool-orchestration-service', title: 'Tool Orchestration Service', version: '1.0.0' };
const INSTRUCTIONS =
  'Developer-ops tools (security scans, code analysis, automation, integrations, monitoring). ' +
  'Every tools/call is recorded as an execution; its id is in the result _meta.execution_id.';
/** Only used for elicitation, which this server never sends; one instance instead of one Ajv per request. */
const SCHEMA_VALIDATOR = new AjvJsonSchemaValidator();
/** The request headers the Streamable HTTP transport reads. */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version'] as const;

/**
 * Stateless Streamable HTTP (MCP 2025-11-25 and the older versions the SDK negotiates): every
 * POST gets its own SDK Server and transport, bound to the caller's key. Answers are JSON, except
 * a tools/call that asked for progress, which is answered on an SSE stream carrying the
 * notifications/progress before its result.
 */
@Injectable()
export class McpEndpoint {
  constructor(
    private readonly tools: McpTools,
    private readonly cancellations: McpCancellations,
  ) {}

  async handle(principal: Principal, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const server = this.serverFor(principal, request, reply);
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: !wantsProgress(request.body) });
    // A client gone mid-answer leaves a stream (and its keep-alive timer) to close; a finished
    // answer leaves nothing, and closing would only build a ConnectionClosed error per request.
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) void server.close();
    });
    await server.connect(transport);
    const response = await transport.handleRequest(webRequest(request), { parsedBody: request.body });
    await send(response, reply);
  }

  private serverFor(principal: Principal, request: FastifyRequest, reply: FastifyReply): Server {
    const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS, jsonSchemaValidator: SCHEMA_VALIDATOR });
    const gone = callerGone(reply);
    const cache = !asksNoCache(request.headers['cache-control']);
    server.setRequestHandler(ListToolsRequestSchema, ({ params }) => this.tools.list(principal, params?.cursor));
    server.setRequestHandler(CallToolRequestSchema, async ({ params }, extra) => {
      const cancelled = this.cancellations.track(principal.keyId, extra.requestId);
      const progressToken = params._meta?.progressToken;
      const context: CallContext = {
        signal: AbortSignal.any([gone, cancelled.signal]),
        cache,
        requestId: request.id,
        elapsedMs: () => reply.elapsedTime,
        ...(progressToken !== undefined && {
          onProgress: (progress, message) =>
            void extra
              .sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total: 100, ...(message !== null && { message }) } })
              .catch(() => undefined), // the stream is gone; the call itself notices
        }),
      };
      try {
        return await this.tools.call(principal, params.name, params.arguments, context);
      } finally {
        cancelled.release();
      }
    });
    // The cancelled request usually runs in another POST (or process): see McpCancellations.
    server.setNotificationHandler(CancelledNotificationSchema, ({ params }) => {
      if (params.requestId !== undefined) this.cancellations.cancel(principal.keyId, params.requestId);
    });
    return server;
  }
}

function isCallWithProgress(message: unknown): boolean {
  const m = message as { method?: unknown; id?: unknown; params?: { _meta?: { progressToken?: unknown } } } | null;
  return m?.method === 'tools/call' && m.id !== undefined && m.params?._meta?.progressToken !== undefined;
}

function wantsProgress(body: unknown): boolean {
  return Array.isArray(body) ? body.some(isCallWithProgress) : isCallWithProgress(body);
}

/** The transport speaks web-standard Request/Response; the body is already parsed (and inflated) by Fastify. */
function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const name of TRANSPORT_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  return new Request(`http://mcp.local${request.url}`, { method: request.method, headers });
}

async function send(response: Response, reply: FastifyReply): Promise<void> {
  const type = response.headers.get('content-type') ?? '';
  if (type.startsWith('text/event-stream') && response.body) {
    const raw = openEventStream(reply, response.status);
    Readable.fromWeb(response.body as import('node:stream/web').ReadableStream).pipe(raw);
    return;
  }
  reply.status(response.status);
  response.headers.forEach((value, name) => void reply.header(name, value));
  await reply.send(response.body ? await response.text() : undefined);
}
