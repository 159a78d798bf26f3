/**
 * The service as an OAuth resource server (docs/authorization.md) on both engines: protected
 * resource metadata (RFC 9728), the Bearer challenge of every 401, access tokens of a loopback
 * issuer verified against its JWKS (audience, expiry, not-before, issuer, typ, algorithm, key),
 * the token's account, scopes and tools applied like a key's, and 403 insufficient_scope step-up
 * on REST and MCP. The official SDK client calls /v1/mcp with a token.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { discoverOAuthServerInfo, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AccessTokenVerifier } from '../src/auth/access-token-verifier';
import { SCOPES } from '../src/identity/scopes';
import { useTestApp, type TestAccount } from './support/app';
import { describeEachEngine, ENGINE_MODES } from './support/engines';
import { freePort } from './support/free-port';
import { connectLive } from './support/live-client';
import { startOAuthIssuer, type OAuthIssuer } from './support/oauth-issuer';
import { TestToolsModule } from './support/test-tools.module';

const ENV: Record<string, string> = { EGRESS_ALLOW: '127.0.0.1' };

describeEachEngine('OAuth resource server', (mode) => {
  let issuer: OAuthIssuer;
  let base: string;
  // Before the app starts: its configuration names the issuer and the URL it is reached at.
  beforeAll(async () => {
    issuer = await startOAuthIssuer();
    base = `http://127.0.0.1:${await freePort()}`;
    Object.assign(ENV, { OAUTH_ISSUER: issuer.url, PUBLIC_URL: base });
  });
  const suite = useTestApp(mode, { env: ENV, extensions: [TestToolsModule] });
  const clients: Client[] = [];
  let other: TestAccount;

  beforeAll(async () => {
    await suite.t.app.listen({ port: Number(new URL(base).port), host: '127.0.0.1' });
    other = await suite.t.createAccount('oauth-other');
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await issuer?.close();
  });

  const mcp = () => `${base}/v1/mcp`;
  const rest = () => `${base}/v1`;
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  const connect = async (token: string) => {
    const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcp()), { requestInit: { headers: bearer(token) } }));
    clients.push(client);
    return client;
  };

  /** One raw JSON-RPC POST to /v1/mcp. */
  const post = (token: string | null, message: unknown) =>
    fetch(mcp(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(token && bearer(token)) },
      body: JSON.stringify(message),
    });
  const callTool = (id: number, name: string, args: object) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

  it('publishes protected resource metadata for /v1/mcp and /v1, public and naming the issuer and our scopes', async () => {
    for (const [path, resource] of [
      ['/.well-known/oauth-protected-resource/v1/mcp', mcp()],
      ['/.well-known/oauth-protected-resource', mcp()],
      ['/.well-known/oauth-protected-resource/v1', rest()],
    ]) {
      const res = await suite.t.request({ method: 'GET', url: path });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ resource, authorization_servers: [issuer.url], scopes_supported: [...SCOPES], bearer_methods_supported: ['header'] });
    }
  });

  it('answers every 401 from /v1/mcp and /v1 with a challenge pointing at the metadata', async () => {
    const anonymous = await post(null, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/v1/mcp", scope="tools:read tools:invoke executions:read"`,
    );
    expect(await anonymous.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' } });

    const badKey = await suite.t.request({ method: 'GET', url: '/v1/tools', key: 'sk_svc_' + 'x'.repeat(32) });
    expect(badKey.statusCode).toBe(401);
    expect(badKey.headers['www-authenticate']).toBe(
      `Bearer error="invalid_token", resource_metadata="${base}/.well-known/oauth-protected-resource/v1", scope="tools:read tools:invoke executions:read"`,
    );
  });

  it("lets the SDK's discovery find the authorization server from a 401, and from the well-known path", async () => {
    const challenge = extractWWWAuthenticateParams(await post(null, { jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    expect(challenge).toEqual({ resourceMetadataUrl: new URL(`${base}/.well-known/oauth-protected-resource/v1/mcp`), scope: 'tools:read tools:invoke executions:read' });
    for (const resourceMetadataUrl of [challenge.resourceMetadataUrl, undefined]) {
      const found = await discoverOAuthServerInfo(mcp(), { resourceMetadataUrl });
      expect(found).toMatchObject({
        authorizationServerUrl: issuer.url,
        resourceMetadata: { resource: mcp() },
        authorizationServerMetadata: { issuer: issuer.url, jwks_uri: `${issuer.url}/jwks` },
      });
    }
  });

  it('lets the SDK v2 client call at 2026-07-28 with a token, and refuses one short of tools:invoke at the HTTP level', async () => {
    const v2 = async (token: string) => {
      const client = new ClientV2({ name: 'oauth-e2e-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new TransportV2(new URL(mcp()), { requestInit: { headers: bearer(token) } }));
      return client;
    };
    const full = await v2(await issuer.mint(suite.acme.id, { audience: mcp() }));
    try {
      const result = await full.callTool({ name: 'json-transform', arguments: { data: { a: 1 }, expression: 'a' } });
      expect(result.isError).toBeFalsy();
    } finally {
      await full.close();
    }
    const readOnly = await v2(await issuer.mint(suite.acme.id, { audience: mcp(), scope: 'tools:read' }));
    try {
      expect((await readOnly.listTools()).tools.length).toBeGreaterThan(0);
      await expect(readOnly.callTool({ name: 'json-transform', arguments: { data: {}, expression: '1' } })).rejects.toThrow(/Insufficient scope: required "tools:read tools:invoke"/);
    } finally {
      await readOnly.close();
    }
  });

  it('lets the official SDK client list and call tools with a token for /v1/mcp, as the account it names', async () => {
    const client = await connect(await issuer.mint(suite.acme.id, { audience: mcp() }));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('json-transform');
    const result = await client.callTool({ name: 'json-transform', arguments: { data: { a: 41 }, expression: 'a + 1' } });
    expect(result.isError).toBeFalsy();
    expect(JSON.stringify(result.structuredContent ?? result.content)).toContain('42');

    // The execution is the token's account's: seen with its key, not with another account's.
    const mine = (await suite.t.request({ method: 'GET', url: '/v1/executions?tool_id=json-transform&limit=1', key: suite.acme.key })).json().executions;
    expect(mine).toHaveLength(1);
    const theirs = await suite.t.request({ method: 'GET', url: `/v1/executions/${mine[0].id}`, key: other.key });
    expect(theirs.statusCode).toBe(404);
  });

  it('accepts a token for /v1 on REST, with the rate-limit window of a key', async () => {
    const token = await issuer.mint(other.id, { audience: rest() });
    const res = await suite.t.request({ method: 'GET', url: '/v1/tools', headers: bearer(token) });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
    const invoked = await suite.t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke', headers: bearer(token), payload: { inputs: { data: { n: 1 }, expression: 'n' } } });
    expect(invoked.statusCode).toBe(200);
    // Another account's execution stays out of sight of this token.
    const acmeExecution = (await suite.t.request({ method: 'GET', url: '/v1/executions?limit=1', key: suite.acme.key })).json().executions[0];
    expect((await suite.t.request({ method: 'GET', url: `/v1/executions/${acmeExecution.id}`, headers: bearer(token) })).statusCode).toBe(404);
  });

  it('refuses tokens for another resource, expired, not yet valid, of another issuer, not access tokens, unsigned by the issuer, or for no account', async () => {
    const refusals: Array<[string, Promise<string>, RegExp]> = [
      ['for /v1/mcp used on /v1', issuer.mint(suite.acme.id, { audience: mcp() }), /not for this resource/],
      ['for another server', issuer.mint(suite.acme.id, { audience: 'https://elsewhere.example/v1' }), /not for this resource/],
      ['expired', issuer.mint(suite.acme.id, { audience: rest(), expiresIn: -60 }), /expired/],
      ['not yet valid', issuer.mint(suite.acme.id, { audience: rest(), notBefore: 600 }), /not valid yet/],
      ['of another issuer', issuer.mint(suite.acme.id, { audience: rest(), issuer: 'https://idp.example' }), /not issued by/],
      ['an ID token', issuer.mint(suite.acme.id, { audience: rest(), typ: 'JWT' }), /typ must be at\+jwt/],
      ['signed by an unpublished key', issuer.mintWithUnpublishedKey(suite.acme.id, { audience: rest() }), /signature does not verify/],
      ['HS256', issuer.mintSymmetric(suite.acme.id, { audience: rest() }), /algorithm is not accepted/],
      ['for no account', issuer.mint('acct_nobody', { audience: rest() }), /not an account/],
      ['with an unreadable tool allowlist', issuer.mint(suite.acme.id, { audience: rest(), tools: 'json-transform' }), /'tools' claim must be an array/],
    ];
    for (const [what, token, message] of refusals) {
      const res = await suite.t.request({ method: 'GET', url: '/v1/tools', headers: bearer(await token) });
      expect({ what, status: res.statusCode, message: res.json().error?.message }).toEqual({ what, status: 401, message: expect.stringMatching(message) });
      expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token", resource_metadata=/);
    }
    const mcpForRest = await post(await issuer.mint(suite.acme.id, { audience: rest() }), { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(mcpForRest.status).toBe(401);
    // Refused tokens are never echoed back.
    const token = await issuer.mint(suite.acme.id, { audience: 'https://elsewhere.example/v1' });
    const res = await suite.t.request({ method: 'GET', url: '/v1/tools', headers: bearer(token) });
    expect(res.body).not.toContain(token.split('.')[2]);
  });

  it('asks for step-up with 403 insufficient_scope on REST and on MCP, before anything runs', async () => {
    const readOnly = await issuer.mint(suite.acme.id, { audience: rest(), scope: 'tools:read' });
    const res = await suite.t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke', headers: bearer(readOnly), payload: { inputs: { data: {}, expression: '1' } } });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toMatchObject({ code: 'FORBIDDEN', message: "This access token lacks the 'tools:invoke' scope", details: { error: 'insufficient_scope', missing_scopes: ['tools:invoke'] } });
    expect(res.headers['www-authenticate']).toBe(`Bearer error="insufficient_scope", scope="tools:read tools:invoke", resource_metadata="${base}/.well-known/oauth-protected-resource/v1"`);

    const mcpReadOnly = await issuer.mint(suite.acme.id, { audience: mcp(), scope: 'tools:read' });
    const before = (await suite.t.request({ method: 'GET', url: '/v1/executions?tool_id=test-record&limit=100', key: suite.acme.key })).json().executions.length;
    const refused = await post(mcpReadOnly, callTool(7, 'test-record', {}));
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer error="insufficient_scope", scope="tools:read tools:invoke", resource_metadata="${base}/.well-known/oauth-protected-resource/v1/mcp"`);
    const after = (await suite.t.request({ method: 'GET', url: '/v1/executions?tool_id=test-record&limit=100', key: suite.acme.key })).json().executions.length;
    expect(after).toBe(before);
    // What the token does hold still works.
    expect((await post(mcpReadOnly, { jsonrpc: '2.0', id: 8, method: 'tools/list' })).status).toBe(200);
    // A batch with one call beyond the token is refused whole.
    expect((await post(mcpReadOnly, [{ jsonrpc: '2.0', id: 9, method: 'tools/list' }, callTool(10, 'json-transform', { data: {}, expression: '1' })])).status).toBe(403);
  });

  it("applies the token's tool allowlist: listed alone, other tools refused", async () => {
    const narrowed = await issuer.mint(suite.acme.id, { audience: mcp(), tools: ['json-transform'] });
    const client = await connect(narrowed);
    // execution.status is no tool of the catalogue: it reads the account's executions (executions:read).
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['execution.status', 'json-transform']);
    await expect(client.callTool({ name: 'test-record', arguments: {} })).rejects.toThrow(/This access token may not use tool 'test-record'/);

    const restNarrowed = await issuer.mint(suite.acme.id, { audience: rest(), tools: ['json-transform'] });
    const res = await suite.t.request({ method: 'POST', url: '/v1/tools/test-record/invoke', headers: bearer(restNarrowed), payload: { inputs: {} } });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toBe("This access token may not use tool 'test-record'");
  });

  it('opens the live-updates WebSocket to a token for /v1, as its account; refuses one for /v1/mcp before the upgrade', async () => {
    const live = await connectLive(base, { key: await issuer.mint(other.id, { audience: rest() }) });
    try {
      expect(await live.next('ready', (m) => m.type === 'ready')).toMatchObject({ account_id: other.id, key_id: `oauth:test-client:${other.id}` });
    } finally {
      live.close();
    }
    await expect(connectLive(base, { key: await issuer.mint(other.id, { audience: mcp() }) })).rejects.toMatchObject({ status: 401 });
  });

  it('remembers a verified token no longer than it is valid, and per resource', async () => {
    const verifier = suite.t.app.get(AccessTokenVerifier);
    const token = await issuer.mint(suite.acme.id, { audience: rest(), expiresIn: 60 });
    expect(await verifier.verify(token, '/v1')).toMatchObject({ ok: true });
    expect(await verifier.verify(token, '/v1', Date.now() + 120_000)).toEqual({ ok: false, message: 'Invalid access token: it has expired' });
    expect(await verifier.verify(token, '/v1/mcp')).toMatchObject({ ok: false, message: expect.stringMatching(/not for this resource/) });
  });

  it('reads the JWKS once for many tokens (cached)', async () => {
    const fetched = issuer.jwksFetches;
    for (let i = 0; i < 5; i++) {
      const res = await suite.t.request({ method: 'GET', url: '/v1/tools', headers: bearer(await issuer.mint(suite.acme.id, { audience: rest() })) });
      expect(res.statusCode).toBe(200);
    }
    expect(issuer.jwksFetches).toBe(fetched);
    expect(fetched).toBe(1);
  });
});

describe('OAuth resource server: the issuer behind the egress policy', () => {
  let issuer: OAuthIssuer;
  const env: Record<string, string> = {};
  beforeAll(async () => {
    issuer = await startOAuthIssuer();
    // No EGRESS_ALLOW: the loopback issuer is a refused address for the service's outbound calls.
    Object.assign(env, { OAUTH_ISSUER: issuer.url, PUBLIC_URL: 'http://127.0.0.1:1' });
  });
  const suite = useTestApp(ENGINE_MODES[0], { env });
  afterAll(() => issuer?.close());

  it('answers 503, retryable, when the JWKS cannot be fetched, and never reaches the refused address', async () => {
    const token = await issuer.mint(suite.acme.id, { audience: 'http://127.0.0.1:1/v1' });
    const res = await suite.t.request({ method: 'GET', url: '/v1/tools', headers: { authorization: `Bearer ${token}` } });
    expect(res.statusCode).toBe(503);
    expect(res.json().error).toMatchObject({ code: 'INTERNAL_ERROR', retryable: true, message: expect.stringMatching(/signing keys cannot be read/) });
    expect(issuer.jwksFetches).toBe(0);
    // API keys work as ever.
    expect((await suite.t.request({ method: 'GET', url: '/v1/tools', key: suite.acme.key })).statusCode).toBe(200);
  });
});

describe('OAuth resource server: the issuer rotates its signing key', () => {
  let issuer: OAuthIssuer;
  const env: Record<string, string> = { EGRESS_ALLOW: '127.0.0.1', PUBLIC_URL: 'http://127.0.0.1:1' };
  beforeAll(async () => {
    issuer = await startOAuthIssuer();
    env.OAUTH_ISSUER = issuer.url;
  });
  const suite = useTestApp(ENGINE_MODES[0], { env });
  afterAll(() => issuer?.close());

  it('takes tokens of the new key once it is published, reading the JWKS again at most every 30 s', async () => {
    const get = async () => (await suite.t.request({ method: 'GET', url: '/v1/tools', headers: { authorization: `Bearer ${await issuer.mint(suite.acme.id, { audience: 'http://127.0.0.1:1/v1' })}` } })).statusCode;
    expect(await get()).toBe(200);
    await issuer.rotate();
    // Within the cooldown the cached set is kept: an unknown key id does not make the service hammer the issuer.
    expect(await get()).toBe(401);
    expect(issuer.jwksFetches).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 30_500));
    expect(await get()).toBe(200);
    expect(issuer.jwksFetches).toBe(2);
  }, 60_000);
});
