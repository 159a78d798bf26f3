import type { CallToolResult, Client, ElicitRequest, ElicitResult, Progress } from '@modelcontextprotocol/client';
import { SERVICE_VERSION } from '../common/service-version';
import { UPSTREAM_TOOL_NAME, type DiscoveredTool } from './upstream.entity';
import { UpstreamSessions } from './upstream-sessions';
import { callAsTask, runsToolCallsAsTasks, type TaskFollowing } from './upstream-tasks';
import { callAsExtensionTask, servesTasksExtension } from './upstream-extension-tasks';

/** At most this many tools/list pages are read from one upstream (a server that pages forever stops here). */
const MAX_LIST_PAGES = 50;
/** At most this many tools are taken from one upstream. */
const MAX_TOOLS = 500;

/** Who we are to upstreams. */
const CLIENT_INFO = { name: 'tool-orchestration-service', version: SERVICE_VERSION };
/** Elicitation is declared so upstreams offer the tools that ask (server-everything registers those only then); each call answers through its own handler. */
const CLIENT_CAPABILITIES = { elicitation: { form: {} } };

/** Where and how to reach one upstream: every request goes through `fetch` (the egress policy's). */
export interface UpstreamConnection {
  url: string;
  bearer?: string;
  fetch: typeof fetch;
  signal: AbortSignal;
}

/**
 * A connected SDK client (initialize done, ended by `connectSignal`); every request it makes ends
 * when `streams` aborts (its close, for a kept session; the call's end, for one of its own).
 */
async function connected(connection: UpstreamConnection, streams: AbortSignal, connectSignal = streams, onToolsChanged?: () => void): Promise<Client> {
  // Loaded on the first upstream call, not at start: a worker process loads no MCP SDK until it calls an upstream.
  const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  // The SDK v2 client probes with 2026-07-28 `server/discover` and falls back to 2025-11-25
  // `initialize` for a server that does not know it.
  const client = new Client(CLIENT_INFO, {
    versionNegotiation: { mode: 'auto' },
    capabilities: CLIENT_CAPABILITIES,
    // Only told, not listed: the service's own discovery lists the tools again (its filter, its record).
    ...(onToolsChanged && { listChanged: { tools: { autoRefresh: false, onChanged: () => onToolsChanged() } } }),
  });
  const transport = new StreamableHTTPClientTransport(new URL(connection.url), {
    fetch: (input, init) => connection.fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, streams]) : streams }),
    requestInit: connection.bearer ? { headers: { authorization: `Bearer ${connection.bearer}` } } : {},
  });
  await client.connect(transport, { signal: connectSignal });
  return client;
}

/**
 * Runs `work` with a client connected to the upstream, then closes it and aborts whatever it still
 * has open (the SDK keeps a GET event stream open after initialize, which would hold a connection
 * of the egress pool until the process ends).
 */
async function session<T>(connection: UpstreamConnection, work: (client: Client) => Promise<T>): Promise<T> {
  const done = new AbortController();
  const signal = AbortSignal.any([connection.signal, done.signal]);
  try {
    const client = await connected(connection, signal);
    try {
      return await work(client);
    } finally {
      await client.close().catch(() => undefined);
    }
  } finally {
    done.abort();
  }
}

/** A connection kept to hear an upstream's changes; `ended` settles once, however it ends. */
export interface ToolListWatch {
  ended: Promise<void>;
  close(): Promise<void>;
}

/**
 * A client kept connected to hear the upstream's own `tools/list_changed`: on 2026-07-28 the SDK
 * opens `subscriptions/listen` for it, on 2025-11-25 it comes on the session's event stream.
 * Undefined when the upstream declares no `tools.listChanged`. The watch ends when the
 * subscription or the stream does (the SDK gives up re-opening either), or on `close`.
 */
export async function watchToolList(connection: UpstreamConnection, onChanged: () => void): Promise<ToolListWatch | undefined> {
  const done = new AbortController();
  const signal = AbortSignal.any([connection.signal, done.signal]);
  const close = async () => {
    await client?.close().catch(() => undefined);
    done.abort();
  };
  let client: Client | undefined;
  try {
    client = await connected(connection, signal, signal, onChanged);
  } catch (err) {
    done.abort();
    throw err;
  }
  if (!client.getServerCapabilities()?.tools?.listChanged) {
    await close();
    return undefined;
  }
  const ended = new Promise<void>((resolve) => {
    signal.addEventListener('abort', () => resolve(), { once: true });
    client.onclose = () => resolve();
    client.onerror = (err) => /^(Maximum reconnection attempts|Failed to reconnect)/.test(err.message) && resolve();
    void client.autoOpenedSubscription?.closed.then(() => resolve());
  });
  return { ended, close };
}

/** What listing needs of a connected client: the SDK v2 client of an HTTP upstream, or the SDK v1 client driving a stdio process. */
interface ToolLister {
  listTools(params: { cursor?: string }, options: { signal: AbortSignal }): Promise<{ tools: ListedTool[]; nextCursor?: string }>;
}
type ListedTool = Omit<DiscoveredTool, 'operation' | 'task_support'> & { execution?: { taskSupport?: string } };

/**
 * tools/list page by page on a connected client: the upstream's tools as it describes them, and
 * with `tasks` (the upstream runs tools/call as tasks) whether each may or must run as one. With
 * the 2026-07-28 Tasks extension the upstream decides per call (its tools/list says nothing of
 * it): each tool may run as one.
 */
export async function listedTools(client: ToolLister, signal: AbortSignal, tasks: boolean | 'extension' = false): Promise<DiscoveredTool[]> {
  const tools: DiscoveredTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const listed = await client.listTools(cursor === undefined ? {} : { cursor }, { signal });
    // A tool the upstream runs only as a task is left out of an upstream whose tasks we cannot follow (docs/upstreams.md#upstream-tasks): every call would fail.
    const callable = listed.tools.filter((tool) => UPSTREAM_TOOL_NAME.test(tool.name) && (tasks || tool.execution?.taskSupport !== 'required'));
    for (const tool of callable.slice(0, MAX_TOOLS - tools.length)) {
      const taskSupport = tool.execution?.taskSupport ?? (tasks === 'extension' ? 'optional' : undefined);
      tools.push({
        name: tool.name,
        ...(tool.title && { title: tool.title }),
        ...(tool.description && { description: tool.description }),
        inputSchema: tool.inputSchema as Record<string, unknown>,
        ...(tool.outputSchema && { outputSchema: tool.outputSchema as Record<string, unknown> }),
        ...(tool.annotations && { annotations: tool.annotations as Record<string, unknown> }),
        ...(tasks && (taskSupport === 'optional' || taskSupport === 'required') && { task_support: taskSupport }),
      });
    }
    cursor = listed.nextCursor;
    if (!cursor || tools.length >= MAX_TOOLS) break;
  }
  return tools;
}

/** server/discover (or initialize), then tools/list page by page: the upstream's tools as it describes them. */
export function discoverTools(connection: UpstreamConnection): Promise<DiscoveredTool[]> {
  return session(connection, (client) => listedTools(client, connection.signal, servesTasksExtension(client) ? 'extension' : runsToolCallsAsTasks(client)));
}

/** What one tools/call does with what the upstream sends during it. */
export interface CallHandlers {
  timeoutMs: number;
  /** Each `notifications/progress` of the call. */
  onProgress(progress: Progress): void;
  /** Each `elicitation/create` the upstream sends during the call; the answer goes back to it. */
  onElicit(request: ElicitRequest['params']): Promise<ElicitResult>;
  /** Set when the call is to run as an upstream task (if the upstream still runs tools/call as tasks). */
  task?: TaskFollowing;
}

/**
 * tools/call on a connected client: progress asked for and reported, elicitations answered, the
 * signal cancelling it (the SDK sends notifications/cancelled; a task is cancelled with tasks/cancel).
 * A call to run as a task opts in to the upstream's tasks: the 2026-07-28 extension, or 2025-11-25 `tasks`.
 */
async function callOn(client: Client, connection: UpstreamConnection, name: string, args: Record<string, unknown>, handlers: CallHandlers): Promise<CallToolResult> {
  const { signal } = connection;
  client.setRequestHandler('elicitation/create', (request) => handlers.onElicit(request.params));
  const lost = connectionLoss(client);
  try {
    const route = { url: connection.url, bearer: connection.bearer, fetch: connection.fetch, clientInfo: CLIENT_INFO, capabilities: CLIENT_CAPABILITIES };
    const call =
      handlers.task && servesTasksExtension(client)
        ? callAsExtensionTask(client, route, name, args, signal, handlers, handlers.task)
        : handlers.task && runsToolCallsAsTasks(client)
          ? callAsTask(client, name, args, signal, handlers, handlers.task)
          : client.callTool({ name, arguments: args }, { signal, timeout: handlers.timeoutMs, onprogress: handlers.onProgress });
    return (await Promise.race([call, lost.promise])) as CallToolResult;
  } finally {
    lost.stop();
    // A kept session's next question must not reach this call's (finished) execution.
    client.removeRequestHandler('elicitation/create');
  }
}

/** How long a ping may take when a stream broke: an upstream that does not answer it is gone. */
const LIVENESS_PING_MS = 5_000;

/**
 * A promise that rejects when the upstream is lost while a call waits on it. The SDK reports a
 * broken event stream only to `onerror` and leaves the request waiting (for ever when the stream
 * cannot be resumed, docs/upstreams.md): a stream that broke is followed by a ping, and an
 * unanswered ping, or a resumption the SDK gave up on, ends the call.
 */
function connectionLoss(client: Client): { promise: Promise<never>; stop(): void } {
  let lose!: (err: Error) => void;
  const promise = new Promise<never>((_, reject) => (lose = reject));
  promise.catch(() => undefined);
  const stopped = new AbortController();
  client.onerror = (err) => {
    if (stopped.signal.aborted) return;
    if (/^(Maximum reconnection attempts|Failed to reconnect)/.test(err.message)) lose(new Error(`the upstream's event stream was lost: ${err.message}`));
    else if (err.message.startsWith('SSE stream disconnected')) {
      client.ping({ timeout: LIVENESS_PING_MS, signal: stopped.signal }).catch((pingErr: Error) => {
        if (!stopped.signal.aborted) lose(new Error(`the upstream's event stream broke and it does not answer a ping: ${pingErr.message}`, { cause: pingErr }));
      });
    }
  };
  return { promise, stop: () => stopped.abort() };
}

/** The process's kept upstream sessions. */
export const upstreamSessions = new UpstreamSessions();

/**
 * tools/call of one upstream tool, on a kept session of this upstream and credential
 * (`sessionKey`) or a new one kept after; `connection.fetch` must not be bound to the call, as
 * the session outlives it.
 */
export function callUpstreamTool(connection: UpstreamConnection & { sessionKey: string }, name: string, args: Record<string, unknown>, handlers: CallHandlers): Promise<CallToolResult> {
  return upstreamSessions.run(
    connection.sessionKey,
    (ends) => connected(connection, ends, AbortSignal.any([ends, connection.signal])),
    (client) => callOn(client, connection, name, args, handlers),
  );
}
