/**
 * `tos mcp stdio`: an MCP server on stdin/stdout that forwards tools, prompts, resources and
 * completions to the service's /v1/mcp, so desktop MCP hosts need no third-party bridge. It offers
 * what the service offers (its capabilities, as the service announced them). Progress
 * notifications flow back to the host; the host's cancellation aborts the remote call.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { ClientError, connectionFromEnv, EXIT, signingFetch } from './api-client';

/** Connects to the service first, so a wrong URL or key is one line on stderr (stdout belongs to MCP), not a stack trace. */
async function connectRemote(): Promise<Client> {
  const connection = connectionFromEnv();
  const remote = new Client({ name: 'tos-stdio-bridge', version: '1.0.0' });
  try {
    await remote.connect(new StreamableHTTPClientTransport(new URL(`${connection.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${connection.apiKey}` } }, fetch: signingFetch(connection) }));
  } catch (err) {
    const reason = (err as Error).cause ?? (err as Error).message;
    throw new ClientError('CONNECTION_FAILED', `cannot open an MCP session at ${connection.url}/v1/mcp: ${reason}`, 'check TOS_URL and TOS_API_KEY (tos auth status), and that the service runs', EXIT.error);
  }
  return remote;
}

export async function serveMcpOverStdio(): Promise<void> {
  const remote = await connectRemote();
  const offered: ServerCapabilities = remote.getServerCapabilities() ?? {};
  const capabilities: ServerCapabilities = {
    tools: {},
    ...(offered.prompts && { prompts: {} }),
    ...(offered.resources && { resources: {} }),
    ...(offered.completions && { completions: {} }),
  };
  const server = new Server({ name: 'tos', version: '1.0.0' }, { capabilities });
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
  if (capabilities.prompts) {
    server.setRequestHandler(ListPromptsRequestSchema, (request, extra) => remote.listPrompts(request.params, { signal: extra.signal }));
    server.setRequestHandler(GetPromptRequestSchema, (request, extra) => remote.getPrompt(request.params, { signal: extra.signal }));
  }
  if (capabilities.resources) {
    server.setRequestHandler(ListResourcesRequestSchema, (request, extra) => remote.listResources(request.params, { signal: extra.signal }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, (request, extra) => remote.listResourceTemplates(request.params, { signal: extra.signal }));
    server.setRequestHandler(ReadResourceRequestSchema, (request, extra) => remote.readResource(request.params, { signal: extra.signal }));
  }
  if (capabilities.completions) server.setRequestHandler(CompleteRequestSchema, (request, extra) => remote.complete(request.params, { signal: extra.signal }));
  server.onclose = () => void remote.close();
  await server.connect(new StdioServerTransport());
}
