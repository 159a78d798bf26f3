import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SERVICE_VERSION } from '../common/service-version';
import type { DiscoveredTool } from './upstream.entity';

/** At most this many tools/list pages are read from one upstream (a server that pages forever stops here). */
const MAX_LIST_PAGES = 50;
/** At most this many tools are taken from one upstream. */
const MAX_TOOLS = 500;
/** The names MCP allows a tool (2025-11-25 "Tool names"); any other is left out, so `<upstream>.<tool>` is safe in a URL path. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** Where and how to reach one upstream: every request goes through `fetch` (the egress policy's). */
export interface UpstreamConnection {
  url: string;
  bearer?: string;
  fetch: typeof fetch;
  signal: AbortSignal;
}

/** A connected SDK client (initialize done); every request it makes ends when `signal` aborts. */
async function connected(connection: UpstreamConnection, signal: AbortSignal): Promise<Client> {
  // Loaded on the first upstream call, not at start: a worker process loads no MCP SDK until it calls an upstream.
  const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]);
  const client = new Client({ name: 'tool-orchestration-service', version: SERVICE_VERSION });
  const transport = new StreamableHTTPClientTransport(new URL(connection.url), {
    fetch: (input, init) => connection.fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal }),
    requestInit: connection.bearer ? { headers: { authorization: `Bearer ${connection.bearer}` } } : {},
  });
  await client.connect(transport, { signal });
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

/** tools/list page by page on a connected client: the upstream's tools as it describes them. */
export async function listedTools(client: Client, signal: AbortSignal): Promise<DiscoveredTool[]> {
  const tools: DiscoveredTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const listed = await client.listTools(cursor === undefined ? {} : { cursor }, { signal });
    for (const tool of listed.tools.filter(({ name }) => TOOL_NAME.test(name)).slice(0, MAX_TOOLS - tools.length)) {
      tools.push({
        name: tool.name,
        ...(tool.title && { title: tool.title }),
        ...(tool.description && { description: tool.description }),
        inputSchema: tool.inputSchema as Record<string, unknown>,
        ...(tool.outputSchema && { outputSchema: tool.outputSchema as Record<string, unknown> }),
        ...(tool.annotations && { annotations: tool.annotations as Record<string, unknown> }),
      });
    }
    cursor = listed.nextCursor;
    if (!cursor || tools.length >= MAX_TOOLS) break;
  }
  return tools;
}

/** initialize, then tools/list page by page. */
export function discoverTools(connection: UpstreamConnection): Promise<DiscoveredTool[]> {
  return session(connection, (client) => listedTools(client, connection.signal));
}

/** tools/call of one upstream tool; aborting the signal cancels the request (the SDK sends notifications/cancelled). */
export function callUpstreamTool(connection: UpstreamConnection, name: string, args: Record<string, unknown>, timeoutMs: number): Promise<CallToolResult> {
  return session(connection, async (client) => (await client.callTool({ name, arguments: args }, undefined, { signal: connection.signal, timeout: timeoutMs })) as CallToolResult);
}
