/**
 * The MCP Server Card (SEP-2127) and this host's MCP Catalog: public, readable from any origin,
 * and saying what the endpoint itself says — the revisions `server/discover` and `initialize`
 * accept, the capabilities `server/discover` declares, the protected resource metadata the 401s
 * point at, the registry's tools.
 */
import { useTestApp } from './support/app';
import { describeEachEngine } from './support/engines';
import { TestToolsModule } from './support/test-tools.module';

const MODERN = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'e2e-card', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const PUBLIC_URL = 'https://tos.example.com';

describeEachEngine('MCP Server Card', (mode) => {
  const suite = useTestApp(mode, { env: { PUBLIC_URL, MCP_ALLOWED_ORIGINS: '*' }, extensions: [TestToolsModule] });

  const rpc = async (method: string, params: Record<string, unknown> = {}, protocolVersion = MODERN) => {
    const res = await suite.t.request({
      method: 'POST',
      url: '/v1/mcp',
      key: suite.acme.key,
      headers: { host: 'tos.example.com', accept: 'application/json, text/event-stream', 'mcp-protocol-version': protocolVersion, 'mcp-method': method },
      payload: { jsonrpc: '2.0', id: 1, method, params: protocolVersion === MODERN ? { ...params, _meta: ENVELOPE } : params },
    });
    expect(res.statusCode).toBe(200);
    return res.json().result;
  };

  it('is public at the reserved /server-card and the well-known path, alike, for any origin', async () => {
    const card = await suite.t.request({ method: 'GET', url: '/v1/mcp/server-card' });
    expect(card.statusCode).toBe(200);
    expect(card.headers['content-type']).toMatch(/^application\/mcp-server\+json/);
    expect(card.headers['access-control-allow-origin']).toBe('*');
    expect(card.json()).toMatchObject({
      $schema: 'https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json',
      name: 'com.example.tos/tool-orchestration-service',
      remotes: [{ type: 'streamable-http', url: `${PUBLIC_URL}/v1/mcp`, headers: [{ name: 'Authorization', isRequired: true, isSecret: true }] }],
    });
    expect(card.json().name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    const wellKnown = await suite.t.request({ method: 'GET', url: '/.well-known/mcp/server-card.json' });
    expect(wellKnown.json()).toEqual(card.json());

    const catalog = await suite.t.request({ method: 'GET', url: '/.well-known/mcp/catalog.json' });
    expect(catalog.statusCode).toBe(200);
    expect(catalog.json()).toEqual({
      specVersion: 'draft',
      entries: [{ identifier: `urn:mcp:server:${card.json().name}`, displayName: 'Tool Orchestration Service', mediaType: 'application/mcp-server+json', url: `${PUBLIC_URL}/v1/mcp/server-card` }],
    });
  });

  it('says what server/discover and initialize say: versions, identity, capabilities', async () => {
    const card = (await suite.t.request({ method: 'GET', url: '/v1/mcp/server-card' })).json();
    const [remote] = card.remotes;
    const discovered = await rpc('server/discover');
    expect(remote.supportedProtocolVersions).toEqual(expect.arrayContaining(discovered.supportedVersions));
    expect(discovered._meta['io.modelcontextprotocol/serverInfo']).toMatchObject({ name: 'tool-orchestration-service', version: card.version, title: card.title });
    expect(card._meta['tool-orchestration-service/capabilities']).toEqual(discovered.capabilities);
    // Every revision the card lists is one the endpoint takes: 2025 ones through initialize.
    for (const version of remote.supportedProtocolVersions.filter((v: string) => v !== MODERN)) {
      const initialized = await rpc('initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 'e2e-card', version: '1.0.0' } }, version);
      expect(initialized.protocolVersion).toBe(version);
    }
  });

  it('points at the protected resource metadata of the endpoint, and counts the tools every key of the registry may see', async () => {
    const card = (await suite.t.request({ method: 'GET', url: '/v1/mcp/server-card' })).json();
    const { protected_resource_metadata: metadataUrl } = card._meta['tool-orchestration-service/authorization'];
    expect(metadataUrl).toBe(`${PUBLIC_URL}/.well-known/oauth-protected-resource/v1/mcp`);
    const metadata = await suite.t.request({ method: 'GET', url: new URL(metadataUrl).pathname });
    expect(metadata.json().resource).toBe(card.remotes[0].url);
    // The 401 of the endpoint names the same document.
    const refused = await suite.t.request({ method: 'POST', url: '/v1/mcp', headers: { host: 'tos.example.com' }, payload: {} });
    expect(refused.headers['www-authenticate']).toContain(`resource_metadata="${metadataUrl}"`);

    const tools = card._meta['tool-orchestration-service/tools'];
    const listed = await suite.t.request({ method: 'GET', url: '/v1/tools?limit=1', key: suite.acme.key });
    expect(tools.count).toBe(listed.json().total);
    expect(Object.values(tools.categories as Record<string, number>).reduce((sum, n) => sum + n, 0)).toBe(tools.count);
  });
});
