import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { acceptedContent, createMcpHandler, inputRequired, McpServer as McpServerV2 } from '@modelcontextprotocol/server';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { ServerOptions } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryTaskStore, type CreateTaskRequestHandlerExtra, type TaskRequestHandlerExtra } from '@modelcontextprotocol/sdk/experimental/tasks/index.js';
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

async function listening(server: HttpServer, methods: string[], at = 0): Promise<SdkMcpServer> {
  await new Promise<void>((resolve) => server.listen(at, '127.0.0.1', resolve));
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

/** An SDK v1 server (its tools registered by `tools`) over Streamable HTTP sessions opened by `initialize`. */
async function startSessionServer(info: { name: string; options?: ServerOptions; port?: number; seen?: Seen }, tools: (server: McpServerV1) => void): Promise<SdkMcpServer> {
  const methods: string[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (req, res) => {
    const body = req.method === 'POST' ? await bodyOf(req) : undefined;
    if (body) noted(methods, body);
    info.seen?.(req, res, body);
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!transport) {
      if (typeof id === 'string' || !body?.includes('"initialize"')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      const created = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (sid) => void sessions.set(sid, created) });
      const server = new McpServerV1({ name: info.name, version: '1.0.0' }, info.options);
      tools(server);
      await server.connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, body === undefined ? undefined : JSON.parse(body));
  });
  return listening(http, methods, info.port);
}

/** SDK v1 server speaking only MCP 2025-11-25 (sessions through `initialize`), with tool `add`. */
export function startLegacyOnlyServer(): Promise<SdkMcpServer> {
  return startSessionServer({ name: 'legacy-only' }, (server) => {
    server.registerTool('add', { description: 'Adds a and b', inputSchema: SUM_INPUT }, async ({ a, b }) => ({ content: [{ type: 'text', text: `sum=${a + b}` }] }));
  });
}

/** How often the task server asks its callers to poll a task (ms). */
export const TASK_POLL_INTERVAL_MS = 200;

/**
 * SDK v1 server with the 2025-11-25 `tasks` capability for tools/call (the SDK's own task store,
 * which keeps a task for the session that created it), on `port` if given:
 * `count` runs `steps` half-seconds as a task, its status message `step n of steps` after each
 * (a cancelled task stops and is counted in `cancelled`); `explode` is a task that fails after
 * half a second; `abandon` is a task the server cancels itself after half a second; `fleeting`
 * a task kept only 300 ms that never ends (it expires); `refuse` a task tool whose task is never
 * created (the SDK answers the call with a JSON-RPC error); `add` is an ordinary tool.
 */
export async function startTaskServer(port = 0): Promise<SdkMcpServer> {
  let seen: SdkMcpServer | undefined;
  const taskStore = new InMemoryTaskStore();
  const options: ServerOptions = { capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }, taskStore };
  /** A task run in the background: `work` reports through the store; the task is `failed` with its message when it throws. */
  const inBackground = (work: (taskId: string) => Promise<CallToolResult>, ttl = 60_000) => async (extra: CreateTaskRequestHandlerExtra) => {
    const task = await extra.taskStore.createTask({ ttl, pollInterval: TASK_POLL_INTERVAL_MS });
    void work(task.taskId).then(
      (result) => extra.taskStore.storeTaskResult(task.taskId, 'completed', result).catch(() => undefined),
      (err: Error) => extra.taskStore.storeTaskResult(task.taskId, 'failed', { content: [{ type: 'text', text: err.message }], isError: true }).catch(() => undefined),
    );
    return { task };
  };
  const stored = {
    getTask: async (_args: unknown, extra: TaskRequestHandlerExtra) => (await extra.taskStore.getTask(extra.taskId))!,
    getTaskResult: async (_args: unknown, extra: TaskRequestHandlerExtra) => (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
  };
  const started = await startSessionServer({ name: 'task-server', options, port }, (server) => {
    server.registerTool('add', { description: 'Adds a and b', inputSchema: SUM_INPUT }, async ({ a, b }) => ({ content: [{ type: 'text', text: `sum=${a + b}` }] }));
    server.experimental.tasks.registerToolTask('count', { description: 'Counts steps as a task, half a second each', inputSchema: { steps: z.number() }, execution: { taskSupport: 'optional' } }, {
      createTask: ({ steps }, extra) =>
        inBackground(async (taskId) => {
          for (let step = 1; step <= steps; step++) {
            await new Promise((resolve) => setTimeout(resolve, 500));
            if ((await taskStore.getTask(taskId))?.status === 'cancelled') {
              seen!.cancelled++;
              return { content: [{ type: 'text', text: 'cancelled' }], isError: true };
            }
            await taskStore.updateTaskStatus(taskId, 'working', `step ${step} of ${steps}`);
          }
          return { content: [{ type: 'text', text: `counted ${steps}` }] };
        })(extra),
      ...stored,
    });
    server.experimental.tasks.registerToolTask('explode', { description: 'A task that fails', inputSchema: {}, execution: { taskSupport: 'required' } }, {
      createTask: (_args, extra) =>
        inBackground(async () => {
          await new Promise((resolve) => setTimeout(resolve, 500));
          throw new Error('the upstream task blew up');
        })(extra),
      ...stored,
    });
    server.experimental.tasks.registerToolTask('abandon', { description: 'A task its server cancels', inputSchema: {}, execution: { taskSupport: 'optional' } }, {
      createTask: (_args, extra) =>
        inBackground(async (taskId) => {
          await new Promise((resolve) => setTimeout(resolve, 500));
          await taskStore.updateTaskStatus(taskId, 'cancelled', 'the upstream gave up');
          return new Promise<never>(() => undefined);
        })(extra),
      ...stored,
    });
    server.experimental.tasks.registerToolTask('refuse', { description: 'A task tool that refuses to start', inputSchema: {}, execution: { taskSupport: 'optional' } }, {
      createTask: () => Promise.reject(new Error('no room for another task')),
      ...stored,
    });
    server.experimental.tasks.registerToolTask('fleeting', { description: 'A task that expires', inputSchema: {}, execution: { taskSupport: 'optional' } }, {
      createTask: (_args, extra) => inBackground(() => new Promise<never>(() => undefined), 300)(extra),
      ...stored,
    });
  });
  // The store keeps a timer per task until its ttl: closing the server clears them.
  seen = { ...started, close: () => (taskStore.cleanup(), started.close()) };
  return seen;
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
  // Every session's server, so a tool added later reaches each (registering on a connected one sends the notification).
  const servers: McpServerV1[] = [];
  const served = await startSessionServer({ name: 'changing-legacy', options: { capabilities: { tools: { listChanged: true } } }, seen: streams.count }, (server) => {
    server.registerTool('add', { description: 'Adds a and b', inputSchema: SUM_INPUT }, async ({ a, b }) => ({ content: [{ type: 'text', text: `sum=${a + b}` }] }));
    for (const name of added) server.registerTool(name, { description: `Added at run time: ${name}` }, ran(name));
    servers.push(server);
  });
  return {
    ...served,
    streams: streams.open,
    addTool: (name) => {
      added.push(name);
      for (const server of servers) if (server.isConnected()) server.registerTool(name, { description: `Added at run time: ${name}` }, ran(name));
    },
  };
}
