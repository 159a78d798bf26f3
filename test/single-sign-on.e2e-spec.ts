/**
 * Single sign-on with the company's identity provider (docs/authorization.md#single-sign-on) on both
 * engines, against a real OpenID provider on loopback (test/support/company-idp.ts: its own
 * oidc-provider, not the built-in server): console sign-in by group claim followed hop by hop as a
 * browser would, just-in-time membership made once, refusals without a matching rule (and access
 * lost when a user leaves the group), forged callbacks refused; and external-AS mode, where that
 * provider's access tokens call /v1/mcp as the account their groups map to, and a token for another
 * audience is refused.
 */
import { createHash, randomBytes } from 'node:crypto';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DataSource } from 'typeorm';
import { Account } from '../src/keys/account.entity';
import { SESSION_COOKIE } from '../src/sessions/console-credentials';
import { useTestApp } from './support/app';
import { Browser } from './support/browser';
import { startCompanyIdp, type CompanyIdp } from './support/company-idp';
import { launchChromium, watchedContext } from './support/console-browser';
import { describeEachEngine, ENGINE_MODES } from './support/engines';
import { freePort } from './support/free-port';
import { MemoryClientProvider } from './support/sdk-oauth-client';

const ENV: Record<string, string> = { EGRESS_ALLOW: '127.0.0.1' };
/** Accounts the rules name: made by the test (as an operator would with `tos accounts create`) before anyone signs in. */
const PLATFORM = 'acc_ssoPlatformTeam000001';
const DATA = 'acc_ssoDataTeam000000001';
const RULES = [
  { group: 'platform-admins', account: PLATFORM, role: 'owner' },
  { group: 'developers', account: PLATFORM, role: 'member' },
  { email_domain: 'data.example', account: DATA, role: 'viewer' },
  { group: 'ghosts', account: 'acc_nobodyMadeThisOne0001', role: 'viewer' },
];
/** A JSON answer's body, for reading its fields (fetch types it unknown). */
const jsonOf = async (response: Response | Promise<Response>): Promise<any> => (await response).json();
/** Where the company's agent client is sent back with its code; never requested. */
const AGENT_REDIRECT = 'http://127.0.0.1:9/agent-callback';

describeEachEngine('Single sign-on with the company identity provider', (mode) => {
  let idp: CompanyIdp;
  let base: string;
  beforeAll(async () => {
    base = `http://127.0.0.1:${await freePort()}`;
    idp = await startCompanyIdp({ redirectUris: [`${base}/console/sso/callback`, AGENT_REDIRECT] });
    idp.users.set('u-alice', { email: 'alice@corp.example', groups: ['platform-admins', 'developers'] });
    idp.users.set('u-bob', { email: 'bob@corp.example', groups: ['developers'] });
    idp.users.set('u-carol', { email: 'carol@corp.example', groups: ['marketing'] });
    idp.users.set('u-dave', { email: 'dave@corp.example', groups: ['developers'] });
    idp.users.set('u-erin', { email: 'erin@data.example', email_verified: false, groups: [] });
    idp.users.set('u-frank', { email: 'frank@data.example', groups: [] });
    idp.users.set('u-ghost', { email: 'ghost@corp.example', groups: ['ghosts'] });
    Object.assign(ENV, {
      PUBLIC_URL: base,
      OIDC_ISSUER: idp.url,
      OIDC_CLIENT_ID: idp.clientId,
      OIDC_CLIENT_SECRET: idp.clientSecret,
      OIDC_PROVIDER_NAME: 'Corp SSO',
      OIDC_SCOPES: 'openid email groups',
      OIDC_RULES: JSON.stringify(RULES),
      // The same provider is the authorization server for MCP clients (external-AS mode).
      OAUTH_ISSUER: idp.url,
      OAUTH_SUBJECT: 'claims',
    });
  });
  const suite = useTestApp(mode, { env: ENV });
  let platformKey: string;

  beforeAll(async () => {
    const accounts = suite.t.app.get(DataSource).getRepository(Account);
    await accounts.insert([accounts.create({ id: PLATFORM, name: 'sso-platform', tier: 'enterprise' }), accounts.create({ id: DATA, name: 'sso-data', tier: 'enterprise' })]);
    platformKey = await suite.t.createKey(PLATFORM, { name: 'platform-svc', type: 'service' });
    await suite.t.app.listen({ port: Number(new URL(base).port), host: '127.0.0.1' });
  });
  afterAll(() => idp?.close());

  /** A fresh browser signing in as `subject` at the provider, from the console's button to wherever the flow lands. */
  const signIn = async (subject: string, browser = new Browser()) => {
    idp.signInAs(subject);
    const { response, url, hops } = await browser.follow(`${base}/console/sso/start`);
    return { browser, response: response!, url, hops, html: await response!.text() };
  };
  const consoleSession = (browser: Browser) => browser.go(`${base}/console/session`);
  const members = async (browser: Browser) => jsonOf(browser.go(`${base}/v1/console/members`));

  it('offers the provider on the console', async () => {
    const res = await fetch(`${base}/console/sso`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ provider: 'Corp SSO', start_url: '/console/sso/start' });
  });

  it('signs a member of the admins group in to the console of its account by the group claim, end to end over HTTP', async () => {
    const { browser, response, url, hops } = await signIn('u-alice');
    // Out to the provider with PKCE (S256), state and nonce; back through the callback; on to the console.
    const authorize = hops.find((hop) => hop.href.startsWith(`${idp.url}/auth`))!;
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.searchParams.get('state')).toBeTruthy();
    expect(authorize.searchParams.get('nonce')).toBeTruthy();
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${base}/console/sso/callback`);
    expect(hops.some((hop) => hop.pathname === '/console/sso/callback' && hop.searchParams.has('code'))).toBe(true);
    expect({ status: response.status, url: url.href }).toEqual({ status: 200, url: `${base}/console` });
    expect(browser.cookie(`${base}/console/sso/callback`, 'tos_sso')).toBeUndefined(); // the pending sign-in is spent
    // The service read the provider's metadata and its keys (the ID token's signature is checked), and redeemed the code.
    for (const path of ['/.well-known/openid-configuration', '/jwks', '/token']) expect({ path, fetched: (idp.served.get(path) ?? 0) > 0 }).toEqual({ path, fetched: true });

    const session = await consoleSession(browser);
    expect(session.status).toBe(200);
    const body = await jsonOf(session);
    expect(body.account).toMatchObject({ id: PLATFORM, name: 'sso-platform' });
    expect(body.session.scopes).toContain('keys:manage'); // owner: the first rule that matched, not developers' member
    expect((await members(browser)).members).toEqual([expect.objectContaining({ issuer: idp.url, subject: 'u-alice', email: 'alice@corp.example', role: 'owner' })]);
  });

  it('makes the membership once: a second sign-in finds it', async () => {
    const before = (await members((await signIn('u-alice')).browser)).members;
    const again = await signIn('u-alice');
    expect(again.response.status).toBe(200);
    const after = (await members(again.browser)).members;
    expect(after).toHaveLength(1);
    expect(after[0].id).toBe(before[0].id);
    expect(after[0].created_at).toBe(before[0].created_at);
    expect(Date.parse(after[0].last_sign_in_at)).toBeGreaterThan(Date.parse(before[0].last_sign_in_at));
  });

  it("gives a developer the member role's scopes: no keys:manage", async () => {
    const { browser } = await signIn('u-bob');
    const body = await jsonOf(consoleSession(browser));
    expect(body.account.id).toBe(PLATFORM);
    expect(body.session.scopes).not.toContain('keys:manage');
    expect(body.session.scopes).toContain('tools:invoke');
    expect((await browser.go(`${base}/v1/tools?limit=1`)).status).toBe(200);
    expect((await browser.go(`${base}/v1/console/members`)).status).toBe(403);
  });

  it('admits a verified email by its domain, never an unverified one', async () => {
    const frank = await signIn('u-frank');
    expect((await jsonOf(consoleSession(frank.browser))).account.id).toBe(DATA);
    const erin = await signIn('u-erin');
    expect(erin.response.status).toBe(403);
    expect(erin.browser.cookie(base, SESSION_COOKIE)).toBeUndefined();
  });

  it('refuses someone no rule matches with a page saying why, and opens no session', async () => {
    const { browser, response, html } = await signIn('u-carol');
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(html).toContain('carol@corp.example');
    expect(html).toContain('<code>marketing</code>');
    expect(html).toMatch(/no rule of this service gives that access to an account/);
    expect(browser.cookie(base, SESSION_COOKIE)).toBeUndefined();
    expect((await consoleSession(browser)).status).toBe(401);
    const platformMembers = (await suite.t.request({ method: 'GET', url: '/v1/console/members', key: platformKey })).json().members;
    expect(platformMembers.map((member: { subject: string }) => member.subject)).not.toContain('u-carol');
  });

  it('refuses a rule naming an account that does not exist, telling the operator which rule', async () => {
    const { response, html } = await signIn('u-ghost');
    expect(response.status).toBe(403);
    expect(html).toMatch(/names an account this service does not have.*rule 3 of OIDC_RULES/);
  });

  it('ends the access of someone removed from the group at their next sign-in, and their open sessions with it', async () => {
    const first = await signIn('u-dave');
    expect((await consoleSession(first.browser)).status).toBe(200);
    idp.users.set('u-dave', { email: 'dave@corp.example', groups: [] });
    const second = await signIn('u-dave');
    expect(second.response.status).toBe(403);
    expect((await consoleSession(first.browser)).status).toBe(401);
    const platformMembers = (await suite.t.request({ method: 'GET', url: '/v1/console/members', key: platformKey })).json().members;
    expect(platformMembers.map((member: { subject: string }) => member.subject).sort()).toEqual(['u-alice', 'u-bob']);
  });

  it('ends the pending sign-in and opens the session in one answer from the callback', async () => {
    idp.signInAs('u-bob');
    const browser = new Browser();
    const { url: callback } = await browser.follow(`${base}/console/sso/start`, (next) => next.pathname === '/console/sso/callback');
    const res = await browser.go(callback.href);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console');
    const cookies = res.headers.getSetCookie();
    expect(cookies).toHaveLength(2);
    expect(cookies.find((cookie) => cookie.startsWith('tos_sso='))).toMatch(/^tos_sso=; Path=\/console\/sso; Max-Age=0; HttpOnly; SameSite=Lax$/);
    expect(cookies.find((cookie) => cookie.startsWith(`${SESSION_COOKIE}=`))).toMatch(/; HttpOnly; SameSite=Strict$/);
  });

  it('refuses a callback this browser did not start, and one whose state was changed', async () => {
    idp.signInAs('u-bob');
    const browser = new Browser();
    const { url: callback } = await browser.follow(`${base}/console/sso/start`, (next) => next.pathname === '/console/sso/callback');
    expect(browser.cookie(callback.href, 'tos_sso')).toBeDefined();
    const elsewhere = await new Browser().go(callback.href);
    expect(elsewhere.status).toBe(400);
    expect(await elsewhere.text()).toMatch(/did not start this sign-in/);

    const forged = new URL(callback);
    forged.searchParams.set('state', 'a'.repeat(43));
    const refused = await browser.go(forged.href);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/answer was not accepted/);
    expect(browser.cookie(base, SESSION_COOKIE)).toBeUndefined();
  });

  it('shows the provider\'s refusal (the user cancelled) as a page, opening no session', async () => {
    const browser = new Browser();
    const { url: authorize } = await browser.follow(`${base}/console/sso/start`, (next) => next.href.startsWith(`${idp.url}/auth`));
    const callback = new URL(`${base}/console/sso/callback`);
    for (const [name, value] of Object.entries({ error: 'access_denied', error_description: 'The user cancelled <script>', state: authorize.searchParams.get('state')!, iss: idp.url })) callback.searchParams.set(name, value);
    const res = await browser.go(callback.href);
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('access_denied: The user cancelled &#60;script&#62;');
    expect(browser.cookie(base, SESSION_COOKIE)).toBeUndefined();
  });

  it("signs in from the console's button in headless Chromium, asking nothing of any other origin; the Members page removes a member", async () => {
    const chromium = await launchChromium();
    try {
      const requested: string[] = [];
      const pageErrors: string[] = [];
      const page = await (await watchedContext(chromium, requested, pageErrors)).newPage();
      idp.signInAs('u-alice');
      await page.goto(`${base}/console`);
      await page.getByRole('link', { name: 'Sign in with Corp SSO' }).click();
      await page.getByRole('heading', { name: 'API keys' }).waitFor();
      expect(await page.locator('#who').textContent()).toContain('sso-platform');

      // The owner sees who joined, and removing a member ends their session at once.
      const bob = await signIn('u-bob');
      expect((await consoleSession(bob.browser)).status).toBe(200);
      await page.locator('#nav').getByRole('link', { name: 'Members' }).click();
      await page.getByRole('heading', { name: 'Members' }).waitFor();
      await page.getByRole('cell', { name: 'alice@corp.example u-alice' }).waitFor();
      await page.getByRole('button', { name: 'Remove bob@corp.example' }).click();
      await page.getByText('Removed bob@corp.example').waitFor();
      await page.getByRole('button', { name: 'Remove bob@corp.example' }).waitFor({ state: 'detached' });
      expect((await consoleSession(bob.browser)).status).toBe(401);
      expect(pageErrors).toEqual([]);
      expect(requested.filter((url) => !url.startsWith(base) && !url.startsWith(idp.url))).toEqual([]);
    } finally {
      await chromium.close();
    }
  });

  /** The company's agent client through the provider's own authorization code flow (PKCE), for `resource`. */
  const accessToken = async (subject: string, resource: string) => {
    idp.signInAs(subject);
    const verifier = randomBytes(32).toString('base64url');
    const authorize = new URL(`${idp.url}/auth`);
    for (const [name, value] of Object.entries({
      client_id: idp.clientId,
      response_type: 'code',
      redirect_uri: AGENT_REDIRECT,
      scope: 'openid tools:read tools:invoke executions:read',
      resource,
      state: randomBytes(8).toString('hex'),
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    })) {
      authorize.searchParams.set(name, value);
    }
    const { url } = await new Browser().follow(authorize.href, (next) => next.href.startsWith(AGENT_REDIRECT));
    const code = url.searchParams.get('code');
    if (!code) throw new Error(`No code: ${url.href}`);
    const token = await fetch(`${idp.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${idp.clientId}:${idp.clientSecret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: AGENT_REDIRECT, code_verifier: verifier, resource }).toString(),
    });
    const body = await jsonOf(token);
    if (!body.access_token) throw new Error(`No token: ${JSON.stringify(body)}`);
    return body.access_token as string;
  };
  const listTools = (token: string) =>
    fetch(`${base}/v1/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });

  it("lets the provider's access token call /v1/mcp as the account its group maps to (external-AS mode)", async () => {
    const token = await accessToken('u-bob', `${base}/v1/mcp`);
    const client = new Client({ name: 'sso-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      const result = await client.callTool({ name: 'json-transform', arguments: { data: { a: 41 }, expression: 'a + 1' } });
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    // The execution is the platform account's.
    const executions = (await suite.t.request({ method: 'GET', url: '/v1/executions?tool_id=json-transform&limit=5', key: platformKey })).json().executions;
    expect(executions).toHaveLength(1);
    expect((await suite.t.request({ method: 'GET', url: `/v1/executions/${executions[0].id}`, key: suite.acme.key })).statusCode).toBe(404);
    // Protected resource metadata points MCP clients at the provider.
    expect((await jsonOf(fetch(`${base}/.well-known/oauth-protected-resource/v1/mcp`))).authorization_servers).toEqual([idp.url]);
  });

  it("takes the official SDK client through the whole flow at the provider: a 401, discovery, PKCE, the provider's login, a token, a tools/call", async () => {
    const mcp = new URL(`${base}/v1/mcp`);
    const provider = new MemoryClientProvider(AGENT_REDIRECT, { client_id: idp.clientId, client_secret: idp.clientSecret });
    const transport = new StreamableHTTPClientTransport(mcp, { authProvider: provider });
    await expect(new Client({ name: 'sso-e2e', version: '1.0.0' }).connect(transport)).rejects.toThrow(UnauthorizedError);
    const asked = provider.authorizationUrl!;
    expect(asked.href.startsWith(`${idp.url}/auth`)).toBe(true); // found from the protected resource metadata
    expect(asked.searchParams.get('resource')).toBe(mcp.href);
    expect(asked.searchParams.get('code_challenge_method')).toBe('S256');
    idp.signInAs('u-bob');
    const { url } = await new Browser().follow(asked.href, (next) => next.href.startsWith(AGENT_REDIRECT));
    await transport.finishAuth(url.searchParams.get('code')!);

    const client = new Client({ name: 'sso-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcp, { authProvider: provider }));
    try {
      expect((await client.callTool({ name: 'json-transform', arguments: { data: { n: 1 }, expression: 'n' } })).isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it("bounds a token's scopes by the role its rule gives: a viewer's token lists tools but calls none", async () => {
    const token = await accessToken('u-frank', `${base}/v1/mcp`);
    expect((await listTools(token)).status).toBe(200);
    const call = await fetch(`${base}/v1/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'json-transform', arguments: { data: {}, expression: '1' } } }),
    });
    expect(call.status).toBe(403);
    expect(call.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope"/);
  });

  it('refuses a token for another audience, and one whose claims no rule maps', async () => {
    const elsewhere = await listTools(await accessToken('u-bob', 'https://elsewhere.example/v1/mcp'));
    expect(elsewhere.status).toBe(401);
    expect((await jsonOf(elsewhere)).error.message).toMatch(/not for this resource/);
    const unmapped = await listTools(await accessToken('u-carol', `${base}/v1/mcp`));
    expect(unmapped.status).toBe(401);
    expect((await jsonOf(unmapped)).error.message).toMatch(/no claim rule of this service maps its groups or email to an account/);
  });
});

describe('Single sign-on under the egress policy', () => {
  let idp: CompanyIdp;
  const env: Record<string, string> = {};
  beforeAll(async () => {
    const base = `http://127.0.0.1:${await freePort()}`;
    idp = await startCompanyIdp({ redirectUris: [`${base}/console/sso/callback`] });
    // No EGRESS_ALLOW: the provider's loopback address is outside the policy.
    Object.assign(env, { PUBLIC_URL: base, OIDC_ISSUER: idp.url, OIDC_CLIENT_ID: idp.clientId, OIDC_CLIENT_SECRET: idp.clientSecret, OIDC_RULES: JSON.stringify(RULES) });
  });
  const suite = useTestApp(ENGINE_MODES.find((mode) => mode.name === 'embedded')!, { env });
  afterAll(() => idp?.close());

  it('reaches the provider only through it: a provider it forbids is a 503 page, and nothing was asked of it', async () => {
    const res = await suite.t.request({ method: 'GET', url: '/console/sso/start' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('30');
    expect(res.body).toMatch(/cannot be reached just now/);
    expect(res.body).not.toContain(idp.clientSecret);
    expect([...idp.served.keys()]).toEqual([]);
  });
});

describeEachEngine('Single sign-on on the built-in authorization server\'s consent page', (mode) => {
  let idp: CompanyIdp;
  let base: string;
  const env: Record<string, string> = { EGRESS_ALLOW: '127.0.0.1', OAUTH_BUILTIN: 'true', SECRETS_KEY: randomBytes(32).toString('base64') };
  beforeAll(async () => {
    base = `http://127.0.0.1:${await freePort()}`;
    idp = await startCompanyIdp({ redirectUris: [`${base}/console/sso/callback`] });
    idp.users.set('u-alice', { email: 'alice@corp.example', groups: ['platform-admins'] });
    Object.assign(env, { PUBLIC_URL: base, OIDC_ISSUER: idp.url, OIDC_CLIENT_ID: idp.clientId, OIDC_CLIENT_SECRET: idp.clientSecret, OIDC_PROVIDER_NAME: 'Corp SSO', OIDC_SCOPES: 'openid email groups', OIDC_RULES: JSON.stringify(RULES) });
  });
  const suite = useTestApp(mode, { env });
  beforeAll(async () => {
    const accounts = suite.t.app.get(DataSource).getRepository(Account);
    await accounts.insert(accounts.create({ id: PLATFORM, name: 'sso-platform', tier: 'enterprise' }));
    await suite.t.app.listen({ port: Number(new URL(base).port), host: '127.0.0.1' });
  });
  afterAll(() => idp?.close());

  it('lets someone not signed in sign in with the provider from the consent page, come back to it, and approve', async () => {
    const registered = await jsonOf(
      fetch(`${base}/oauth/reg`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'SSO Agent', redirect_uris: [AGENT_REDIRECT], token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'], application_type: 'native' }),
      }),
    );
    const verifier = randomBytes(32).toString('base64url');
    const authorize = new URL(`${base}/oauth/auth`);
    for (const [name, value] of Object.entries({
      client_id: registered.client_id,
      response_type: 'code',
      redirect_uri: AGENT_REDIRECT,
      scope: 'tools:read tools:invoke',
      resource: `${base}/v1/mcp`,
      state: 'xyz',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    })) {
      authorize.searchParams.set(name, value);
    }
    const browser = new Browser();
    const consent = await browser.follow(authorize.href);
    const unsigned = await consent.response!.text();
    const offer = /<a href="([^"]+)">Sign in with Corp SSO<\/a>/.exec(unsigned);
    expect(offer).not.toBeNull();
    const start = new URL(offer![1].replace(/&amp;/g, '&'), base);
    expect(start.searchParams.get('return_to')).toBe(consent.url.pathname);

    idp.signInAs('u-alice');
    const signedIn = await browser.follow(start.href);
    expect(signedIn.response!.status).toBe(200);
    const refresh = /<meta http-equiv="refresh" content="0;url=([^"]+)">/.exec(await signedIn.response!.text());
    expect(refresh?.[1]).toBe(consent.url.pathname);

    const page = await (await browser.go(new URL(refresh![1], base).href)).text();
    expect(page).toContain(`Signed in to account <code>${PLATFORM}</code>`);
    const tools = [...page.matchAll(/name="tools" value="([^"]+)"/g)].map((match) => match[1]);
    const form = new URLSearchParams({ decision: 'approve' });
    for (const tool of tools) form.append('tools', tool);
    const approved = await browser.go(consent.url.href, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base }, body: form.toString() });
    const back = await browser.follow(new URL(approved.headers.get('location')!, base).href, (next) => next.href.startsWith(AGENT_REDIRECT));
    const code = back.url.searchParams.get('code')!;
    expect(code).toBeTruthy();
    const token = await jsonOf(
      fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: AGENT_REDIRECT, code_verifier: verifier, client_id: registered.client_id, resource: `${base}/v1/mcp` }).toString(),
      }),
    );
    const listed = await fetch(`${base}/v1/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token.access_token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(listed.status).toBe(200);
  });

  it('returns after sign-in only to its own consent pages', async () => {
    for (const returnTo of ['https://evil.example/', '//evil.example/oauth/interaction/x', '/console', '/oauth/interaction/../../x']) {
      const res = await suite.t.request({ method: 'GET', url: `/console/sso/start?${new URLSearchParams({ return_to: returnTo })}` });
      expect({ returnTo, status: res.statusCode }).toEqual({ returnTo, status: 400 });
    }
  });
});
