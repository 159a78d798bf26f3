import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { acceptedContent, createMcpHandler, inputRequired, McpServer as McpServerV2 } from '@modelcontextprotocol/server';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** A loopback MCP server of our own making, and what it saw. */
export interface SdkMcpServer {
  url: string;
  /** The JSON-RPC methods it was sent, in order. */
  methods: string[];
  /** Calls of `count` (2026-07-28 server) that saw their request cancelled. */
  cancelled: number;
  close(): Promise<void>;
}

const SUM_INPUT = { a: z.number(), b: z.number() };

async function listening(server: HttpServer, methods: string[]): Promise<SdkMcpServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    methods,
    cancelled: 0,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

function noted(methods: string[], body: string): void {
  try {
    const message = JSON.parse(body) as { method?: string };
    if (message.method) methods.push(message.method);
  } catch {
    // not JSON: the SDK answers it
  }
}

type Seen = (req: IncomingMessage, res: ServerResponse, body: string | undefined) => void;

/** A node HTTP server handing each request to an SDK v2 handler (web-standard), noting its methods; `seen` sees each request too. */
function fetchServer(handler: { fetch(request: Request): Promise<Response> }, methods: string[], seen?: Seen): HttpServer {
  return createServer(async (req, res) => {
    const body = req.method === 'POST' ? await bodyOf(req) : undefined;
    if (body) noted(methods, body);
    seen?.(req, res, body);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    // The caller going away (an aborted request) reaches the SDK as the request's signal.
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    const answer = await handler.fetch(new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body, signal: gone.signal }));
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    if (answer.body) Readable.fromWeb(answer.body as NodeReadableStream).pipe(res);
    else res.end();
  });
}

/**
 * SDK v2 server speaking only MCP 2026-07-28 (stateless; `initialize` refused), with tools `add`,
 * `count` (`steps` half-seconds, a progress notification after each; a cancelled request is
 * counted in `cancelled`) and `greet` (asks the caller's name with an `input_required` result).
 */
export async function startModernOnlyServer(): Promise<SdkMcpServer> {
  const methods: string[] = [];
  let seen: SdkMcpServer | undefined;
  const handler = createMcpHandler(
    () => {
      const server = new McpServerV2({ name: 'modern-only', version: '1.0.0' });
      server.registerTool('add', { description: 'Adds a and b', inputSchema: z.object(SUM_INPUT) }, async ({ a, b }) => ({ content: [{ type: 'text', text: `sum=${a + b}` }] }));
      server.registerTool('count', { description: 'Counts steps, half a second each', inputSchema: z.object({ steps: z.number() }) }, async ({ steps }, ctx) => {
        const { signal } = ctx.mcpReq;
        const progressToken = ctx.mcpReq._meta?.progressToken;
        for (let step = 1; step <= steps; step++) {
          await new Promise((resolve) => setTimeout(resolve, 500));
          if (signal.aborted) {
            seen!.cancelled++;
            return { content: [{ type: 'text', text: 'cancelled' }], isError: true };
          }
          if (progressToken !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: step, total: steps } });
        }
        return { content: [{ type: 'text', text: `counted ${steps}` }] };
      });
      server.registerTool('greet', { description: 'Greets the caller by the name it gives', inputSchema: z.object({}) }, async (_, ctx) => {
        const nameSchema = z.object({ name: z.string() });
        const given = acceptedContent(ctx.mcpReq.inputResponses, 'name', nameSchema);
        if (!given) return inputRequired({ inputRequests: { name: inputRequired.elicit({ message: 'Your name?', requestedSchema: nameSchema }) } });
        return { content: [{ type: 'text', text: `hello ${given.name}` }] };
      });
      return server;
    },
    { legacy: 'reject' },
  );
  seen = await listening(fetchServer(handler, methods), methods);
  return seen;
}

/** SDK v1 server speaking only MCP 2025-11-25 (sessions through `initialize`), with tool `add`. */
export async function startLegacyOnlyServer(): Promise<SdkMcpServer> {
  const methods: string[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (req, res) => {
    const body = req.method === 'POST' ? await bodyOf(req) : undefined;
    if (body) noted(methods, body);
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!transport) {
      if (typeof id === 'string' || !body?.includes('"initialize"')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      const created = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (sid) => void sessions.set(sid, created) });
      const server = new McpServerV1({ name: 'legacy-only', version: '1.0.0' });
      server.registerTool('add', { description: 'Adds a and b', inputSchema: SUM_INPUT }, async ({ a, b }) => ({ content: [{ type: 'text', text: `sum=${a + b}` }] }));
      await server.connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, body === undefined ? undefined : JSON.parse(body));
  });
  return listening(http, methods);
}

/** A server whose tools change while it runs, and which says so. */
export interface ChangingMcpServer extends SdkMcpServer {
  /** Adds a tool (it answers `<name> ran`) and sends `notifications/tools/list_changed`. */
  addTool(name: string): void;
  /** Event streams open on it now: 2026 `subscriptions/listen` responses, 2025 session GET streams. */
  streams(): number;
}

/** Counts the event streams a request opens, while they are open. */
function streamCounter(): { count: Seen; open(): number } {
  let open = 0;
  return {
    count: (req, res, body) => {
      if (req.method !== 'GET' && !body?.includes('"subscriptions/listen"')) return;
      open += 1;
      res.on('close', () => (open -= 1));
    },
    open: () => open,
  };
}

/**
 * A server that starts with tool `add` and gains tools on `addTool`, telling its listeners: the
 * SDK v2 server over 2026-07-28 (`subscriptions/listen`, stateless) or the SDK v1 server over
 * 2025-11-25 (the notification on each session's event stream).
 */
export async function startChangingServer(era: 'modern' | 'legacy'): Promise<ChangingMcpServer> {
  const added: string[] = [];
  const methods: string[] = [];
  const streams = streamCounter();
  const ran = (name: string) => async () => ({ content: [{ type: 'text' as const, text: `${name} ran` }] });
  if (era === 'modern') {
    const handler = createMcpHandler(
      () => {
        const server = new McpServerV2({ name: 'changing-modern', version: '1.0.0' });
        server.registerTool('add', { description: 'Adds a and b', inputSchema: z.object(SUM_INPUT) }, async ({ a, b }) => ({ content: [{ type: 'text', text: `sum=${a + b}` }] }));
        for (const name of added) server.registerTool(name, { description: `Added at run time: ${name}`, inputSchema: z.object({}) }, ran(name));
        return server;
      },
      { legacy: 'reject' },
    );
    const served = await listening(fetchServer(handler, methods, streams.count), methods);
    return {
      ...served,
      streams: streams.open,
      addTool: (name) => {
        added.push(name);
        handler.notify.toolsChanged();
      },
      close: async () => {
        await handler.close();
        await served.close();
      },
    };
  }
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServerV1 }>();
  const http = createServer(async (req, res) => {
    const body = req.method === 'POST' ? await bodyOf(req) : undefined;
    if (body) noted(methods, body);
    streams.count(req, res, body);
    const id = req.headers['mcp-session-id'];
    let session = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!session) {
      if (typeof id === 'string' || !body?.includes('"initialize"')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (sid) => void sessions.set(sid, created) });
      const server = new McpServerV1({ name: 'changing-legacy', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
      server.registerTool('add', { description: 'Adds a and b', inputSchema: SUM_INPUT }, async ({ a, b }) => ({ content: [{ type: 'text', text: `sum=${a + b}` }] }));
      for (const name of added) server.registerTool(name, { description: `Added at run time: ${name}` }, ran(name));
      const created = { transport, server };
      transport.onclose = () => void sessions.delete(transport.sessionId ?? '');
      await server.connect(transport);
      session = created;
    }
    await session.transport.handleRequest(req, res, body === undefined ? undefined : JSON.parse(body));
  });
  const served = await listening(http, methods);
  return {
    ...served,
    streams: streams.open,
    // Registering on a connected McpServer sends notifications/tools/list_changed to its session.
    addTool: (name) => {
      added.push(name);
      for (const { server } of sessions.values()) server.registerTool(name, { description: `Added at run time: ${name}` }, ran(name));
    },
  };
}
