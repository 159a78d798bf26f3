/**
 * The built-in authorization server (docs/authorization.md#the-built-in-authorization-server) on both
 * engines: the official SDK client goes from a 401 through discovery, Dynamic Client Registration,
 * PKCE and the consent page (driven over HTTP as a browser would: its cookies, the form post) to a
 * token, calls a tool, refreshes (rotation), and loses access when the grant is revoked. A grant
 * narrowed to one tool cannot call another; a token for another resource is refused.
 */
import { randomBytes } from 'node:crypto';
import { auth, UnauthorizedError, exchangeAuthorization, refreshAuthorization, startAuthorization, discoverOAuthServerInfo } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type * as Jose from 'jose';
import { SESSION_COOKIE } from '../src/sessions/console-credentials';
import { ConsoleSessions } from '../src/sessions/console-sessions.service';
import { importEsm } from '../src/tools/sdk/import-esm';
import { useTestApp, type TestAccount } from './support/app';
import { describeEachEngine } from './support/engines';
import { ensureConformanceSuite, runAuthorizationConformance } from './support/conformance';
import { freePort } from './support/free-port';
import { MemoryClientProvider } from './support/sdk-oauth-client';
import { TestToolsModule } from './support/test-tools.module';

// The signing keys are sealed with SECRETS_KEY (required with PostgreSQL; PGlite makes one in DATA_DIR).
const ENV: Record<string, string> = { EGRESS_ALLOW: '127.0.0.1', OAUTH_BUILTIN: 'true', SECRETS_KEY: randomBytes(32).toString('base64') };
const REDIRECT = 'http://127.0.0.1:9/callback'; // never reached: the test reads the code off the redirect

/** Cookies by name (oidc-provider's are path-scoped; sending them everywhere is harmless here). */
class Browser {
  private readonly jar = new Map<string, string>();
  constructor(session?: string) {
    if (session) this.jar.set(SESSION_COOKIE, session);
  }
  async go(url: string, init: RequestInit = {}): Promise<Response> {
    const cookie = [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as object), ...(cookie && { cookie }) } });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      this.jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    return response;
  }
}

describeEachEngine('OAuth built-in authorization server', (mode) => {
  let base: string;
  beforeAll(async () => {
    base = `http://127.0.0.1:${await freePort()}`;
    ENV.PUBLIC_URL = base;
  });
  beforeAll(() => ensureConformanceSuite(), 600_000);
  const suite = useTestApp(mode, { env: ENV, extensions: [TestToolsModule] });
  const clients: Client[] = [];
  let other: TestAccount;

  beforeAll(async () => {
    await suite.t.app.listen({ port: Number(new URL(base).port), host: '127.0.0.1' });
    other = await suite.t.createAccount('oauth-builtin-other');
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
  });

  const mcp = () => `${base}/v1/mcp`;
  const issuer = () => `${base}/oauth`;

  /** A signed-in console for the account: what the person approving has in their browser. */
  const consoleSession = async (account: TestAccount) => {
    const sessions = suite.t.app.get(ConsoleSessions);
    const link = await sessions.createLink(account.id, null);
    return (await sessions.redeem(link.path.split('/').pop()!, 'e2e')).secret;
  };

  /**
   * The browser's part: open the authorization URL, land on our consent page, post it (the tools
   * left ticked, or deny), follow the redirects back to the client's redirect URI; returns its query.
   */
  const consent = async (authorizationUrl: URL, session: string, choice: { tools?: string[]; deny?: boolean } = {}, redirect = REDIRECT) => {
    const browser = new Browser(session);
    let response = await browser.go(authorizationUrl.href);
    expect(response.status).toBe(303);
    const page = new URL(response.headers.get('location')!, base).href;
    response = await browser.go(page);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    const html = await response.text();
    expect(html).toMatch(/<strong>(E2E Agent|Conformance)<\/strong> asks to act for your account/); // the client by its registered name
    const offered = [...html.matchAll(/name="tools" value="([^"]+)"/g)].map((match) => match[1]);
    const form = new URLSearchParams({ decision: choice.deny ? 'deny' : 'approve' });
    for (const tool of choice.tools ?? offered) form.append('tools', tool);
    response = await browser.go(page, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base }, body: form.toString() });
    while (response.status >= 300 && response.status < 400) {
      const next = new URL(response.headers.get('location')!, base);
      if (next.href.startsWith(redirect)) return { query: next.searchParams, offered, html };
      response = await browser.go(next.href);
    }
    throw new Error(`The flow ended at ${response.status}: ${await response.text()}`);
  };

  /** The SDK's whole flow, as its transport runs it: 401 → discovery → registration → PKCE → consent → token. */
  const authorize = async (account: TestAccount, choice: { tools?: string[] } = {}) => {
    const provider = new MemoryClientProvider(REDIRECT);
    const transport = new StreamableHTTPClientTransport(new URL(mcp()), { authProvider: provider });
    await expect(new Client({ name: 'oauth-builtin-e2e', version: '1.0.0' }).connect(transport)).rejects.toThrow(UnauthorizedError);
    const asked = provider.authorizationUrl!.searchParams;
    expect(asked.get('code_challenge_method')).toBe('S256');
    expect(asked.get('resource')).toBe(mcp());
    expect(asked.get('scope')).toBe('tools:read tools:invoke executions:read'); // from the 401's challenge
    const { query, offered } = await consent(provider.authorizationUrl!, await consoleSession(account), choice);
    await transport.finishAuth(query.get('code')!);
    return { provider, offered };
  };

  const connect = async (token: string) => {
    const client = new Client({ name: 'oauth-builtin-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcp()), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    clients.push(client);
    return client;
  };

  const grantsOf = async (account: TestAccount) => (await suite.t.request({ method: 'GET', url: '/v1/oauth/grants', key: account.key })).json().grants as { id: string; client_name: string; tools: string[] | null; resources: Record<string, string[]> }[];

  it('publishes RFC 8414 and OpenID metadata: code flow with S256 only, registration, revocation, and the protected resource points at it', async () => {
    const { authorizationServerUrl, authorizationServerMetadata } = await discoverOAuthServerInfo(mcp());
    expect(authorizationServerUrl).toBe(issuer());
    expect(authorizationServerMetadata).toMatchObject({
      issuer: issuer(),
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      registration_endpoint: `${issuer()}/reg`,
      revocation_endpoint: `${issuer()}/token/revocation`,
      client_id_metadata_document_supported: true,
    });
    for (const path of ['/.well-known/oauth-authorization-server/oauth', '/oauth/.well-known/openid-configuration']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { issuer: string }).issuer).toBe(issuer());
    }
  });

  it('takes the SDK client through the whole flow to a tools/call, refreshes with rotation, and revoking the grant ends refresh', async () => {
    const { provider } = await authorize(suite.acme);
    const tokens = provider.saved!;
    expect(tokens.refresh_token).toBeTruthy();
    const jose = await importEsm<typeof Jose>('jose');
    expect(jose.decodeProtectedHeader(tokens.access_token).typ).toBe('at+jwt');
    expect(jose.decodeJwt(tokens.access_token)).toMatchObject({ iss: issuer(), aud: mcp(), sub: suite.acme.id, scope: 'tools:read tools:invoke executions:read' });
    expect(tokens.expires_in).toBeLessThanOrEqual(300);

    const client = await connect(tokens.access_token);
    const result = await client.callTool({ name: 'json-transform', arguments: { data: { a: 41 }, expression: 'a + 1' } });
    expect(result.isError).toBeFalsy();

    const { authorizationServerMetadata } = await discoverOAuthServerInfo(mcp());
    const refresh = (refreshToken: string) => refreshAuthorization(issuer(), { metadata: authorizationServerMetadata, clientInformation: provider.info!, refreshToken, resource: new URL(mcp()) });
    const refreshed = await refresh(tokens.refresh_token!);
    expect(refreshed.refresh_token).toBeTruthy();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect((await (await connect(refreshed.access_token)).callTool({ name: 'json-transform', arguments: { data: {}, expression: '1' } })).isError).toBeFalsy();

    const [grant] = (await grantsOf(suite.acme)).filter((row) => row.client_name === 'E2E Agent');
    expect(grant.resources).toEqual({ [mcp()]: ['tools:read', 'tools:invoke', 'executions:read'] });
    expect((await grantsOf(other)).map((row) => row.id)).not.toContain(grant.id);
    // Another account cannot revoke it, nor learn it exists.
    expect((await suite.t.request({ method: 'DELETE', url: `/v1/oauth/grants/${grant.id}`, key: other.key })).statusCode).toBe(404);
    expect((await suite.t.request({ method: 'DELETE', url: `/v1/oauth/grants/${grant.id}`, key: suite.acme.key })).statusCode).toBe(204);
    expect((await grantsOf(suite.acme)).map((row) => row.id)).not.toContain(grant.id);
    await expect(refresh(refreshed.refresh_token!)).rejects.toThrow(/grant/i);
    // Access tokens are not looked up: one issued before the revocation lasts its lifetime (300 s at most), no longer.
    expect(jose.decodeJwt(refreshed.access_token).exp! - jose.decodeJwt(refreshed.access_token).iat!).toBeLessThanOrEqual(300);
  });

  it('gives a grant narrowed to one tool a token that cannot call another', async () => {
    const { provider, offered } = await authorize(suite.acme, { tools: ['json-transform'] });
    expect(offered).toEqual(expect.arrayContaining(['json-transform', 'test-record']));
    const jose = await importEsm<typeof Jose>('jose');
    expect(jose.decodeJwt(provider.saved!.access_token).tools).toEqual(['json-transform']);
    const client = await connect(provider.saved!.access_token);
    expect((await client.callTool({ name: 'json-transform', arguments: { data: {}, expression: '1' } })).isError).toBeFalsy();
    const refused = await client.callTool({ name: 'test-record', arguments: {} }).then((result) => JSON.stringify(result), (err: Error) => err.message);
    expect(refused).toMatch(/This access token may not use tool 'test-record'/);

    // Refresh keeps the narrowing; a rotated refresh token played again ends the whole grant (reuse detection).
    const { authorizationServerMetadata } = await discoverOAuthServerInfo(mcp());
    const refresh = (refreshToken: string) => refreshAuthorization(issuer(), { metadata: authorizationServerMetadata, clientInformation: provider.info!, refreshToken, resource: new URL(mcp()) });
    const refreshed = await refresh(provider.saved!.refresh_token!);
    expect(jose.decodeJwt(refreshed.access_token).tools).toEqual(['json-transform']);
    await expect(refresh(provider.saved!.refresh_token!)).rejects.toThrow(/grant/i);
    await expect(refresh(refreshed.refresh_token!)).rejects.toThrow(/grant/i);
  });

  it('binds tokens to the resource: one for /v1 does not open /v1/mcp, and another server is refused at the authorization endpoint', async () => {
    const provider = new MemoryClientProvider(REDIRECT);
    expect(await auth(provider, { serverUrl: mcp() })).toBe('REDIRECT');
    const { authorizationServerMetadata: metadata } = await discoverOAuthServerInfo(mcp());
    const start = (resource: string) => startAuthorization(issuer(), { metadata, clientInformation: provider.info!, redirectUrl: REDIRECT, scope: 'tools:read tools:invoke', resource: new URL(resource) });

    const elsewhere = await start('http://127.0.0.1:9/v1/mcp');
    const refused = await new Browser().go(elsewhere.authorizationUrl.href);
    expect(new URL(refused.headers.get('location')!).searchParams.get('error')).toBe('invalid_target');

    const restFlow = await start(`${base}/v1`);
    const { query } = await consent(restFlow.authorizationUrl, await consoleSession(suite.acme));
    const tokens = await exchangeAuthorization(issuer(), { metadata, clientInformation: provider.info!, authorizationCode: query.get('code')!, codeVerifier: restFlow.codeVerifier, redirectUri: REDIRECT, resource: new URL(`${base}/v1`) });
    expect((await fetch(`${base}/v1/tools`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200);
    const onMcp = await fetch(mcp(), { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    expect(onMcp.status).toBe(401);
    expect(((await onMcp.json()) as { error: { message: string } }).error.message).toMatch(/not for this resource/);
  });

  it("passes the MCP conformance suite's authorization-server scenarios (metadata endpoint, authorization code grant)", async () => {
    const port = await freePort();
    const callback = `http://127.0.0.1:${port}/callback`;
    const registered = await fetch(`${issuer()}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Conformance', redirect_uris: [callback], token_endpoint_auth_method: 'none', application_type: 'native' }),
    });
    expect(registered.status).toBe(201);
    const { client_id: clientId } = (await registered.json()) as { client_id: string };
    const session = await consoleSession(suite.acme);
    const run = await runAuthorizationConformance({
      issuer: issuer(),
      clientId,
      resource: mcp(),
      port,
      // The person: approves on the consent page, and the browser lands on the suite's callback.
      onAuthorizationUrl: async (url) => {
        const { query } = await consent(new URL(url), session, {}, callback);
        await fetch(`${callback}?${query.toString()}`);
      },
    });
    const checks = run.scenarios;
    expect({ code: run.code, checks }).toMatchObject({ code: 0 });
    expect(checks.map(({ name, failed, warnings }) => ({ name, failed, warnings }))).toEqual([
      { name: 'authorization-server-authorization-code-grant', failed: 0, warnings: 0 },
      { name: 'authorization-server-authorization-server-metadata-endpoint', failed: 0, warnings: 0 },
    ]);
  }, 60_000);

  it('sends the client back with access_denied when the person denies', async () => {
    const provider = new MemoryClientProvider(REDIRECT);
    expect(await auth(provider, { serverUrl: mcp() })).toBe('REDIRECT');
    const { query } = await consent(provider.authorizationUrl!, await consoleSession(suite.acme), { deny: true });
    expect(query.get('error')).toBe('access_denied');
  });
});
