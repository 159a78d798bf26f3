/**
 * `tos mcp stdio`: an MCP server on stdin/stdout that forwards tools/list and tools/call to the
 * service's /v1/mcp, so desktop MCP hosts need no third-party bridge. Progress notifications
 * flow back to the host; the host's cancellation aborts the remote call.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, CallToolResultSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectionFromEnv } from './api-client';

export async function serveMcpOverStdio(): Promise<void> {
  const connection = connectionFromEnv();
  const remote = new Client({ name: 'tos-stdio-bridge', version: '1.0.0' });
  await remote.connect(
    new StreamableHTTPClientTransport(new URL(`${connection.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${connection.apiKey}` } } }),
  );

  const server = new Server({ name: 'tos', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, (request) => remote.listTools(request.params));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const progressToken = request.params._meta?.progressToken;
    return remote.request({ method: 'tools/call', params: request.params }, CallToolResultSchema, {
      signal: extra.signal,
      // Long tools report progress; it also keeps the remote request from timing out.
      resetTimeoutOnProgress: true,
      onprogress:
        progressToken === undefined
          ? undefined
          : (progress) => void extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken } }),
    });
  });
  server.onclose = () => void remote.close();
  await server.connect(new StdioServerTransport());
}
