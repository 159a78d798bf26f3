import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { AppConfig } from '../config/app-config';
import { metadataUrl } from '../auth/protected-resource';
import type { ToolCatalogue } from '../tools/tool-catalogue';
import { MCP_SERVER_INFO } from './mcp-identity';
import { LIBRARY_CAPABILITIES } from './mcp-library';
import { TASKS_EXTENSION } from './mcp-tasks';

/** The revision the SDK v2 serves (McpModernEndpoint); the others are the SDK v1's (McpEndpoint). */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** Every revision /v1/mcp speaks, newest first: what `server/discover` and `initialize` accept between them. */
export const MCP_PROTOCOL_VERSIONS: readonly string[] = [MODERN_PROTOCOL_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS];

/** What the 2026-07-28 server declares in `server/discover`, and the Server Card repeats. */
/** 2026-07-28 adds change subscriptions: the tool list, and updates of the executions a `subscriptions/listen` stream follows. */
export const MODERN_CAPABILITIES = {
  tools: { listChanged: true },
  ...LIBRARY_CAPABILITIES,
  resources: { ...LIBRARY_CAPABILITIES.resources, subscribe: true },
  extensions: { [TASKS_EXTENSION]: {} },
};

/** The Server Card media type, as the Server Card extension (SEP-2127) names it. */
export const SERVER_CARD_MEDIA_TYPE = 'application/mcp-server+json';

const SERVER_CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json';

/** The card's own `_meta` namespace (a single label: the server's name). */
const META = MCP_SERVER_INFO.name;

/** The card's name: the public host reversed, as reverse-DNS names go, then the server's name. */
export function serverCardName(config: AppConfig): string {
  const host = new URL(config.publicUrl).hostname.replace(/^\[|\]$/g, '').replace(/[^a-zA-Z0-9.-]/g, '-');
  return `${host.split('.').reverse().join('.')}/${MCP_SERVER_INFO.name}`;
}

/**
 * The MCP Server Card (SEP-2127, docs/mcp.md "Server Card"): the endpoint, the revisions it speaks,
 * how to authorize (the RFC 9728 metadata the 401s point at) and what tools there are. Built from
 * the constants the endpoint itself serves, so it cannot say other than `server/discover`.
 */
export function serverCard(config: AppConfig, catalogue: ToolCatalogue): Record<string, unknown> {
  const tools = catalogue.all();
  const categories: Record<string, number> = {};
  for (const { definition } of tools) categories[definition.category] = (categories[definition.category] ?? 0) + 1;
  return {
    $schema: SERVER_CARD_SCHEMA,
    name: serverCardName(config),
    version: MCP_SERVER_INFO.version,
    title: MCP_SERVER_INFO.title,
    description: 'Developer-ops tools: security scans, code analysis, automation, integrations',
    websiteUrl: `${config.publicUrl}/docs`,
    remotes: [
      {
        type: 'streamable-http',
        url: `${config.publicUrl}/v1/mcp`,
        headers: [{ name: 'Authorization', description: 'Bearer <API key or OAuth access token>', isRequired: true, isSecret: true }],
        supportedProtocolVersions: [...MCP_PROTOCOL_VERSIONS],
      },
    ],
    _meta: {
      // Where the authorization servers and scopes are: the same document every 401 of /v1/mcp names.
      [`${META}/authorization`]: { protected_resource_metadata: metadataUrl(config, '/v1/mcp') },
      [`${META}/capabilities`]: MODERN_CAPABILITIES,
      // Each account's published workflows join its own tools/list: a public card counts the registry only.
      [`${META}/tools`]: { count: tools.length, categories },
    },
  };
}

/** The MCP Catalog of this host (`/.well-known/mcp/catalog.json`): the one server, pointing at its card. */
export function mcpCatalog(config: AppConfig): Record<string, unknown> {
  return {
    specVersion: 'draft',
    entries: [{ identifier: `urn:mcp:server:${serverCardName(config)}`, displayName: MCP_SERVER_INFO.title, mediaType: SERVER_CARD_MEDIA_TYPE, url: `${config.publicUrl}/v1/mcp/server-card` }],
  };
}
