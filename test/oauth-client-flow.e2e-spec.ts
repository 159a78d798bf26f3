/**
 * The built-in authorization server (docs/authorization.md) used as people use it, on both engines:
 * each official MCP SDK client (v2, and v1's client/auth.js provider) runs the whole flow — a 401, discovery, Dynamic Client Registration
 * or a Client ID Metadata Document, PKCE — and hands the authorization URL to headless Chromium, where
 * the account holder (signed in with a one-time link) approves on the consent page; the browser lands
 * on the client's loopback callback, the client redeems the code, calls a tool, refreshes, and loses
 * access when the grant is revoked (over the API, or on the console's Connected apps page).
 * Then the guard rails of /oauth/*: security headers, per-IP limits, and a restart keeping grants.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  discoverOAuthServerInfo,
  refreshAuthorization,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import * as v1Auth from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ConsoleSessions } from '../src/sessions/console-sessions.service';
import { startTestApp, useTestApp, type TestAccount } from './support/app';
import { describeWithChromium, launchChromium, signIn, watchedContext } from './support/console-browser';
import { ENGINE_MODES } from './support/engines';
import { freePort } from './support/free-port';
import { listenHttp } from './support/http-listen';
import { certificateAuthority } from './support/test-ca';
import { TestToolsModule } from './support/test-tools.module';

/** Low enough to reach in a test, high enough for the flows before it. */
const OAUTH_IP_RATE_LIMIT = 40;

/** The loopback redirect URI a native client listens on (RFC 8252): the browser lands here with the code. */
async function startCallback(): Promise<{ url: string; next(): Promise<URLSearchParams>; close(): Promise<void> }> {
  const waiting: ((query: URLSearchParams) => void)[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') return void res.writeHead(404).end();
    waiting.shift()?.(url.searchParams);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('Signed in: you may close this window.');
  });
  const listening = await listenHttp(server);
  return { url: `${listening.url}/callback`, next: () => new Promise((resolve) => waiting.push(resolve)), close: listening.close };
}

/** The SDK's storage for one client, in memory; the authorization URL goes to the browser. */
class BrowserClientProvider implements OAuthClientProvider {
  info?: StoredOAuthClientInformation;
  saved?: StoredOAuthTokens;
  discovery?: OAuthDiscoveryState;
  verifier = '';
  readonly sentState = randomBytes(16).toString('base64url');
  constructor(
    readonly redirectUrl: string,
    readonly clientMetadata: OAuthClientMetadata,
    private readonly openInBrowser: (url: URL) => Promise<void>,
    readonly clientMetadataUrl?: string,
  ) {}
  state = () => this.sentState;
  clientInformation = () => this.info;
  saveClientInformation = (info: StoredOAuthClientInformation) => void (this.info = info);
  tokens = () => this.saved;
  saveTokens = (tokens: StoredOAuthTokens) => void (this.saved = tokens);
  redirectToAuthorization = (url: URL) => this.openInBrowser(url);
  saveCodeVerifier = (verifier: string) => void (this.verifier = verifier);
  codeVerifier = () => this.verifier;
  saveDiscoveryState = (state: OAuthDiscoveryState) => void (this.discovery = state);
  discoveryState = () => this.discovery;
}

/** What the flow needs of a connected client, whichever SDK made it. */
interface McpClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<{ content?: unknown; isError?: unknown; [field: string]: unknown }>;
  close(): Promise<void>;
}

/** Where the two official SDK clients differ; the flow itself is the same for both. */
interface McpSdk {
  name: string;
  /** A connected client whose transport authorizes (and refreshes on a 401) through the provider. */
  connect(mcp: URL, provider: BrowserClientProvider): Promise<McpClient>;
  /** Connects without tokens: the SDK hands the authorization URL to the provider and throws; resolves to the redeeming of the callback's query. */
  startAuthorization(mcp: URL, provider: BrowserClientProvider): Promise<(query: URLSearchParams) => Promise<void>>;
  /** The SDK's own discovery and refresh, outside a transport. */
  refresh(mcp: URL, provider: BrowserClientProvider, refreshToken: string): Promise<{ refresh_token?: string }>;
}

const SDKS: McpSdk[] = [
  {
    name: 'SDK v2',
    async connect(mcp, provider) {
      const client = new Client({ name: 'oauth-flow-e2e', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new StreamableHTTPClientTransport(mcp, { authProvider: provider }));
      return client;
    },
    async startAuthorization(mcp, provider) {
      const transport = new StreamableHTTPClientTransport(mcp, { authProvider: provider });
      await expect(new Client({ name: 'oauth-flow-e2e', version: '1.0.0' }).connect(transport)).rejects.toThrow(UnauthorizedError);
      return (query) => transport.finishAuth(query); // v2 checks RFC 9207's iss itself
    },
    async refresh(mcp, provider, refreshToken) {
      const { authorizationServerMetadata, authorizationServerUrl } = await discoverOAuthServerInfo(mcp);
      return refreshAuthorization(authorizationServerUrl, { metadata: authorizationServerMetadata, clientInformation: provider.info!, refreshToken, resource: mcp });
    },
  },
  {
    name: 'SDK v1',
    async connect(mcp, provider) {
      const client = new V1Client({ name: 'oauth-flow-e2e-v1', version: '1.0.0' });
      await client.connect(new V1Transport(mcp, { authProvider: provider }));
      return client;
    },
    async startAuthorization(mcp, provider) {
      const transport = new V1Transport(mcp, { authProvider: provider });
      await expect(new V1Client({ name: 'oauth-flow-e2e-v1', version: '1.0.0' }).connect(transport)).rejects.toThrow(v1Auth.UnauthorizedError);
      return (query) => transport.finishAuth(query.get('code')!); // v1 takes the bare code
    },
    async refresh(mcp, provider, refreshToken) {
      const { authorizationServerMetadata, authorizationServerUrl } = await v1Auth.discoverOAuthServerInfo(mcp);
      return v1Auth.refreshAuthorization(authorizationServerUrl, { metadata: authorizationServerMetadata, clientInformation: provider.info!, refreshToken, resource: mcp });
    },
  },
];
const [SDK_V2] = SDKS;

const nativeClient = (name: string, redirect: string): OAuthClientMetadata => ({
  client_name: name,
  redirect_uris: [redirect],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
});

describeWithChromium('OAuth client flows with the SDK clients (v2, v1) and a browser', () => {
  for (const mode of ENGINE_MODES) {
    describe(`[${mode.name}]`, () => {
      const ca = certificateAuthority(mkdtempSync(path.join(tmpdir(), 'tos-oauth-ca-')), { name: 'OAuth flow test CA' });
      const caFile = path.join(mkdtempSync(path.join(tmpdir(), 'tos-oauth-ca-file-')), 'ca.pem');
      writeFileSync(caFile, ca.certificate);
      // The service trusts the throwaway CA through the operator's own setting (EGRESS_CA_FILE), nothing wider.
      const env: Record<string, string> = { EGRESS_ALLOW: '127.0.0.1', EGRESS_CA_FILE: caFile, OAUTH_BUILTIN: 'true', SECRETS_KEY: randomBytes(32).toString('base64'), OAUTH_IP_RATE_LIMIT: String(OAUTH_IP_RATE_LIMIT) };
      let port: number;
      beforeAll(async () => {
        port = await freePort();
        env.PUBLIC_URL = `http://127.0.0.1:${port}`;
      });
      const suite = useTestApp(mode, { env, extensions: [TestToolsModule] });
      let browser: Browser;
      let context: BrowserContext;
      let page: Page;
      let callback: Awaited<ReturnType<typeof startCallback>>;
      let account: TestAccount;
      /** The Client ID Metadata Documents, served over HTTPS on loopback: path → document; and what was fetched. */
      const documents = new Map<string, object>();
      const fetched: string[] = [];
      let documentBase: string;
      let documentServer: Server;
      const requested: string[] = [];
      const pageErrors: string[] = [];
      const clients: McpClient[] = [];

      const base = () => env.PUBLIC_URL;
      const mcp = () => `${base()}/v1/mcp`;

      beforeAll(async () => {
        await suite.t.app.listen({ port, host: '127.0.0.1' });
        account = await suite.t.createAccount('oauth-flow');
        callback = await startCallback();
        const leaf = ca.issue(['localhost']);
        documentServer = createHttpsServer({ cert: leaf.cert, key: leaf.key }, (req, res) => {
          fetched.push(req.url ?? '');
          const document = documents.get(req.url ?? '');
          if (!document) return void res.writeHead(404).end();
          res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(JSON.stringify(document));
        }) as unknown as Server;
        documentBase = (await listenHttp(documentServer)).url.replace('http:', 'https:');
        browser = await launchChromium();
        context = await watchedContext(browser, requested, pageErrors);
        const link = await suite.t.app.get(ConsoleSessions).createLink(account.id, null);
        page = await signIn(context, base(), link.path);
      });
      afterAll(async () => {
        await Promise.all(clients.map((client) => client.close()));
        await browser?.close();
        await callback?.close();
        documentServer?.closeAllConnections();
        documentServer?.close();
        rmSync(path.dirname(caFile), { recursive: true, force: true });
      });

      const openInBrowser = async (url: URL) => void (await page.goto(url.href));

      /** A client over the SDK's transport with the provider's tokens; the SDK's own first attempt throws UnauthorizedError after handing the URL to the browser. */
      const connect = async (sdk: McpSdk, provider: BrowserClientProvider) => {
        const client = await sdk.connect(new URL(mcp()), provider);
        clients.push(client);
        return client;
      };

      /** The person's part in Chromium: the consent page names the client; Allow; the browser lands on the callback. */
      const authorizeInBrowser = async (sdk: McpSdk, provider: BrowserClientProvider, clientName: string) => {
        const landed = callback.next();
        const finishAuth = await sdk.startAuthorization(new URL(mcp()), provider);
        expect(page.url()).toMatch(new RegExp(`^${base()}/oauth/interaction/`));
        await page.getByRole('heading', { name: `Allow ${clientName}?` }).waitFor(); // the client by its metadata's name
        await page.getByRole('button', { name: 'Allow' }).click();
        const query = await landed;
        expect(query.get('state')).toBe(provider.sentState);
        expect(query.get('iss')).toBe(`${base()}/oauth`); // RFC 9207
        await finishAuth(query);
        expect(provider.saved?.access_token).toBeTruthy();
        return query;
      };

      const callTool = (client: McpClient) => client.callTool({ name: 'json-transform', arguments: { data: { a: 41 }, expression: 'a + 1' } });

      const grants = async () => (await suite.t.request({ method: 'GET', url: '/v1/oauth/grants', key: account.key })).json().grants as { id: string; client_id: string; client_name: string | null; client_uri: string | null; last_used_at: string | null }[];

      for (const sdk of SDKS) {
        // Each SDK's client under its own names: the grants, the consent page and Connected apps tell them apart.
        const slug = sdk.name.replace('SDK ', '');
        const dcrName = `Flow DCR Agent ${slug}`;
        const cimdName = `Flow CIMD Agent ${slug}`;
        it(`${sdk.name}: registers (DCR), approves in Chromium, calls a tool, refreshes when the access token is refused, and a grant revoked over the API ends refresh`, async () => {
          const provider = new BrowserClientProvider(callback.url, nativeClient(dcrName, callback.url), openInBrowser);
          await authorizeInBrowser(sdk, provider, dcrName);
          expect(provider.info?.client_id).not.toMatch(/^https:/); // registered, not a metadata document
          const first = provider.saved!;
          const client = await connect(sdk, provider);
          expect(JSON.stringify((await callTool(client)).content)).toContain('42');

          // The transport meets a 401 (a spoiled access token), refreshes with the rotated refresh token, and retries.
          provider.saved = { ...first, access_token: 'spoiled' };
          expect((await callTool(client)).isError).toBeFalsy();
          expect(provider.saved.access_token).not.toBe('spoiled');
          expect(provider.saved.refresh_token).not.toBe(first.refresh_token);
          const [grant] = (await grants()).filter((row) => row.client_name === dcrName);
          expect(Date.parse(grant.last_used_at!)).toBeGreaterThan(Date.now() - 60_000);

          expect((await suite.t.request({ method: 'DELETE', url: `/v1/oauth/grants/${grant.id}`, key: account.key })).statusCode).toBe(204);
          await expect(sdk.refresh(new URL(mcp()), provider, provider.saved.refresh_token!)).rejects.toThrow(/grant/i);
        });

        it(`${sdk.name}: identifies the client by a Client ID Metadata Document fetched over HTTPS under the egress policy, and the Connected apps page revokes it`, async () => {
          const clientId = `${documentBase}/agents/flow-${slug}.json`;
          documents.set(`/agents/flow-${slug}.json`, { client_id: clientId, ...nativeClient(cimdName, callback.url), client_uri: 'https://agent.example/about', application_type: 'native' });
          const provider = new BrowserClientProvider(callback.url, nativeClient(cimdName, callback.url), openInBrowser, clientId);
          await authorizeInBrowser(sdk, provider, cimdName);
          expect(provider.info?.client_id).toBe(clientId); // no registration: the URL is the client id
          expect(fetched).toContain(`/agents/flow-${slug}.json`);
          const client = await connect(sdk, provider);
          expect((await callTool(client)).isError).toBeFalsy();

          await page.goto(`${base()}/console#/connected-apps`);
          await page.getByRole('heading', { name: 'Connected apps' }).waitFor();
          const row = page.getByRole('row').filter({ hasText: cimdName });
          await row.getByText(clientId).waitFor();
          await row.getByRole('link', { name: 'https://agent.example/about' }).waitFor();
          await row.getByText(mcp()).waitFor();
          expect(await page.getByRole('link', { name: 'Connected apps' }).getAttribute('aria-current')).toBe('page');
          await row.getByRole('button', { name: `Revoke ${cimdName}` }).click(); // the confirm() is accepted
          await page.locator('#notice').getByText(`Revoked ${cimdName}`).waitFor();
          await page.getByRole('row').filter({ hasText: cimdName }).waitFor({ state: 'detached' });
          expect((await grants()).map((grant) => grant.client_id)).not.toContain(clientId);

          // The client's next refresh is refused (invalid_grant): it has to ask the person again.
          provider.saved = { ...provider.saved!, access_token: 'spoiled' };
          await expect(callTool(client)).rejects.toThrow(/grant/i);
        });
      }

      it('enforces the redirect URIs a metadata document declares, and fetches none over an untrusted certificate', async () => {
        const clientId = `${documentBase}/agents/strict.json`;
        documents.set('/agents/strict.json', { client_id: clientId, ...nativeClient('Strict Agent', callback.url), application_type: 'native' });
        const authorize = (id: string, redirect: string) =>
          `${base()}/oauth/auth?${new URLSearchParams({ client_id: id, redirect_uri: redirect, response_type: 'code', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', scope: 'tools:read', resource: mcp() })}`;
        const elsewhere = await fetch(authorize(clientId, 'http://127.0.0.1:9/stolen'), { redirect: 'manual' });
        expect(elsewhere.status).toBe(400);
        expect(((await elsewhere.json()) as { error: { details: { error: string } } }).error.details.error).toBe('invalid_redirect_uri');

        // A server whose certificate no trusted CA signed: the fetch fails, the client is unknown.
        const stranger = certificateAuthority(mkdtempSync(path.join(tmpdir(), 'tos-oauth-stranger-'))).issue(['localhost']);
        const untrusted = createHttpsServer({ cert: stranger.cert, key: stranger.key }, (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}')) as unknown as Server;
        const listening = await listenHttp(untrusted);
        try {
          const id = `${listening.url.replace('http:', 'https:')}/agent.json`;
          const refused = await fetch(authorize(id, callback.url), { redirect: 'manual' });
          expect(refused.status).toBe(400);
          expect(((await refused.json()) as { error: { message: string; details: { error: string } } }).error).toMatchObject({ details: { error: 'invalid_client' } });
        } finally {
          await listening.close();
        }
      });

      it('answers /oauth/* with the security headers, and limits registration per client IP with a 429 in the envelope', async () => {
        for (const url of [`${base()}/oauth/.well-known/openid-configuration`, `${base()}/oauth/jwks`]) {
          const res = await fetch(url);
          expect(res.status).toBe(200);
          expect(res.headers.get('x-content-type-options')).toBe('nosniff');
          expect(res.headers.get('x-frame-options')).toBe('DENY');
          expect(res.headers.get('strict-transport-security')).toMatch(/max-age=/);
          expect(res.headers.get('x-request-id')).toBeTruthy();
        }
        const register = () => fetch(`${base()}/oauth/reg`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(nativeClient('Burst', callback.url)) });
        const statuses: number[] = [];
        for (let i = 0; i <= OAUTH_IP_RATE_LIMIT; i++) {
          const res = await register();
          statuses.push(res.status);
          if (res.status === 429) {
            expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
            expect(res.headers.get('x-content-type-options')).toBe('nosniff');
            expect(((await res.json()) as { error: { code: string; details: { limit: number } } }).error).toMatchObject({ code: 'RATE_LIMITED', details: { limit: OAUTH_IP_RATE_LIMIT } });
          } else await res.arrayBuffer();
        }
        expect(statuses.at(-1)).toBe(429);
        expect(statuses.filter((status) => status === 201).length).toBeLessThanOrEqual(OAUTH_IP_RATE_LIMIT);
        // The token endpoint has its own window, still open: it answers as OAuth says (RFC 6749 §5.2).
        const token = await fetch(`${base()}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=refresh_token&refresh_token=nope&client_id=nope' });
        expect(token.status).toBe(401);
        expect(await token.json()).toMatchObject({ error: 'invalid_client' });
      });

      it('keeps grants, refresh tokens and signing keys across a restart, and the client revokes its refresh token (RFC 7009)', async () => {
        // A metadata-document client: the registration window is spent by the test above.
        const clientId = `${documentBase}/agents/restart.json`;
        documents.set('/agents/restart.json', { client_id: clientId, ...nativeClient('Restart Agent', callback.url), application_type: 'native' });
        const provider = new BrowserClientProvider(callback.url, nativeClient('Restart Agent', callback.url), openInBrowser, clientId);
        await authorizeInBrowser(SDK_V2, provider, 'Restart Agent');
        const before = provider.saved!;

        await suite.t.close();
        suite.t = await startTestApp({ env: suite.env, extensions: [TestToolsModule] });
        await suite.t.app.listen({ port, host: '127.0.0.1' });

        // The access token from before still verifies (the signing key was kept, sealed), the grant is listed, and refresh rotates.
        const client = await connect(SDK_V2, provider);
        expect((await callTool(client)).isError).toBeFalsy();
        expect((await grants()).map((grant) => grant.client_name)).toContain('Restart Agent');
        const refreshed = await SDK_V2.refresh(new URL(mcp()), provider, before.refresh_token!);
        expect(refreshed.refresh_token).not.toBe(before.refresh_token);

        // The client itself may end it (RFC 7009): the revoked refresh token is refused afterwards.
        const revoked = await fetch(`${base()}/oauth/token/revocation`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: refreshed.refresh_token!, token_type_hint: 'refresh_token', client_id: clientId }).toString() });
        expect(revoked.status).toBe(200);
        await expect(SDK_V2.refresh(new URL(mcp()), provider, refreshed.refresh_token!)).rejects.toThrow(/grant/i);
      }, 60_000);

      it('made the browser ask nobody but the service and the client callback, without script errors', () => {
        const callbackOrigin = new URL(callback.url).origin;
        expect(requested.filter((url) => !url.startsWith(`${base()}/`) && !url.startsWith(`${callbackOrigin}/`))).toEqual([]);
        expect(pageErrors).toEqual([]);
      });
    });
  }
});
