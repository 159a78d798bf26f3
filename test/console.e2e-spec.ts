/**
 * The browser console (docs/console.md) in headless Chromium against the listening service (embedded
 * engine): sign-in links, the session cookie and its CSRF token, and every page doing its job.
 * Screenshots of each page land in a temp folder named in the output.
 */
import { Browser, BrowserContext, Page } from 'playwright-core';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { releaseDataDir } from '../src/database/data-dir-lock';
import { ConsoleSessions } from '../src/sessions/console-sessions.service';
import { SESSION_COOKIE } from '../src/sessions/console-credentials';
import { startTestApp, TestAccount, useTestApp } from './support/app';
import { describeWithChromium, launchChromium, signIn as openSignInLink, watchedContext } from './support/console-browser';
import { until } from './support/poll';
import { DATABASE_MODES } from './support/databases';
import { ENGINE_MODES } from './support/engines';
import { startRecordingServer } from './support/recording-server';
import { startPetsApi } from './support/openapi-pets';
import { arrived, verified } from './support/webhook-receiver';
import { TestToolsModule } from './support/test-tools.module';

/** Issue 19: the first page, everything it loads included, under 200 KB on the wire. */
const FIRST_PAGE_BUDGET_BYTES = 200 * 1024;
const CLI = path.join(__dirname, '..', 'src', 'cli', 'main.ts');
const run = promisify(execFile);

describeWithChromium('browser console', () => {
  // Webhooks go to a loopback receiver: the egress policy lets 127.0.0.1 through, and sends are polled for often.
  const suite = useTestApp(ENGINE_MODES.find((m) => m.name === 'embedded')!, {
    extensions: [TestToolsModule],
    env: { SECRETS_KEY: randomBytes(32).toString('base64'), EGRESS_ALLOW: '127.0.0.1', WEBHOOK_POLL_MS: '50' },
  });
  const shots = mkdtempSync(path.join(tmpdir(), 'tos-console-shots-'));
  let browser: Browser;
  let baseUrl: string;
  let acme: BrowserContext;
  let page: Page;
  /** Every URL the browser asked for, to prove it talks to nobody but the service. */
  const requested: string[] = [];
  const pageErrors: string[] = [];

  const sessions = () => suite.t.app.get(ConsoleSessions);
  const shoot = (target: Page, name: string) => target.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
  const notice = (target: Page) => target.locator('#notice');

  const newContext = () => watchedContext(browser, requested, pageErrors);
  const signIn = (context: BrowserContext, linkPath: string) => openSignInLink(context, baseUrl, linkPath);

  const linkFor = async (account: TestAccount, now?: Date) => (await sessions().createLink(account.id, null, now)).path;
  const tokenOf = (linkPath: string) => linkPath.split('/').pop()!;
  const cookieOf = async (context: BrowserContext) => (await context.cookies()).find((cookie) => cookie.name === SESSION_COOKIE)!;

  beforeAll(async () => {
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = (await suite.t.app.getUrl()).replace('[::1]', '127.0.0.1');
    browser = await launchChromium();
    acme = await newContext();
    console.log(`console screenshots: ${shots}`);
  });
  afterAll(async () => browser?.close());

  it('signs in through a link from POST /v1/console/links, into an HttpOnly SameSite=Strict cookie, and the first page stays under 200 KB', async () => {
    const link = await suite.t.request({ method: 'POST', url: '/v1/console/links', key: suite.acme.key });
    expect(link.statusCode).toBe(201);
    const { url, path: linkPath, expires_at } = link.json();
    expect(url).toMatch(/\/console#\/sign-in\/[0-9A-Za-z]{43}$/);
    expect(Date.parse(expires_at) - Date.now()).toBeLessThanOrEqual(600_000);

    const transferred: Promise<number>[] = [];
    acme.on('requestfinished', (request) => transferred.push(request.sizes().then((sizes) => sizes.responseBodySize + sizes.responseHeadersSize)));
    page = await signIn(acme, linkPath);
    await page.getByRole('table').waitFor();
    acme.removeAllListeners('requestfinished');
    const bytes = (await Promise.all(transferred)).reduce((sum, size) => sum + size, 0);
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThan(FIRST_PAGE_BUDGET_BYTES);

    const cookie = await cookieOf(acme);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', secure: false, path: '/' });
    expect(await page.evaluate('document.cookie')).toBe(''); // HttpOnly: scripts never see it
    expect(page.url()).toBe(`${baseUrl}/console#/keys`); // the token left the address bar
    await shoot(page, '1-keys');
  });

  it('refuses a used link and an expired one, in the page and over the API', async () => {
    const used = await linkFor(suite.acme);
    const context = await newContext();
    await signIn(context, used);
    const again = await context.newPage();
    await again.goto(`${baseUrl}${used}`);
    await again.getByRole('button', { name: 'Sign in' }).click();
    await notice(again).getByText('UNAUTHORIZED: This sign-in link was used already').waitFor();
    expect(await again.locator('#nav').isVisible()).toBe(false);
    await shoot(again, '0-used-link');

    const expired = await linkFor(suite.acme, new Date(Date.now() - 11 * 60_000));
    await again.goto(`${baseUrl}${expired}`);
    await again.getByRole('button', { name: 'Sign in' }).click();
    await notice(again).getByText('This sign-in link has expired').waitFor();
    await context.close();

    const origin = baseUrl;
    const host = new URL(baseUrl).host;
    const overApi = await suite.t.request({ method: 'POST', url: '/console/session', headers: { origin, host }, payload: { token: tokenOf(expired) } });
    expect(overApi.statusCode).toBe(401);
    expect(overApi.json().error).toMatchObject({ code: 'UNAUTHORIZED' });
    expect(overApi.headers['set-cookie']).toBeUndefined();
    const unknown = await suite.t.request({ method: 'POST', url: '/console/session', headers: { origin, host }, payload: { token: 'x'.repeat(43) } });
    expect(unknown.json().error.message).toContain('is unknown');
    const malformed = await suite.t.request({ method: 'POST', url: '/console/session', headers: { origin, host }, payload: { token: '../etc' } });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().error.code).toBe('INVALID_REQUEST');
    // Another site cannot sign a browser in to the account of a link it holds.
    const fresh = await linkFor(suite.acme);
    const crossSite = await suite.t.request({ method: 'POST', url: '/console/session', headers: { origin: 'https://evil.example', host }, payload: { token: tokenOf(fresh) } });
    expect(crossSite.statusCode).toBe(403);
  });

  it('creates a key whose secret, shown once, works against the API', async () => {
    await page.getByLabel('Name', { exact: true }).fill('ci-deploy');
    await page.getByLabel('Type').selectOption('service');
    await page.getByRole('checkbox', { name: 'keys:manage' }).uncheck();
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretBox = page.getByRole('region', { name: 'New secret' });
    const secret = await secretBox.locator('code').innerText();
    expect(secret).toMatch(/^sk_svc_[0-9A-Za-z]{32}$/);
    await page.getByRole('cell', { name: 'ci-deploy', exact: true }).waitFor();
    await shoot(page, '2-key-created');

    const withSecret = await suite.t.request({ method: 'GET', url: '/v1/tools/test-sleep', key: secret });
    expect(withSecret.statusCode).toBe(200);
    const narrowed = await suite.t.request({ method: 'GET', url: '/v1/keys', key: secret });
    expect(narrowed.statusCode).toBe(403);

    // Reloading shows the key, never its secret again.
    await page.reload();
    await page.getByRole('cell', { name: 'ci-deploy', exact: true }).waitFor();
    expect(await page.content()).not.toContain(secret);
  });

  it('regenerates a user key and revokes it from the keys page', async () => {
    await page.getByLabel('Name', { exact: true }).fill('laptop');
    await page.getByLabel('Type').selectOption('user');
    await page.getByRole('button', { name: 'Create key' }).click();
    const first = await page.getByRole('region', { name: 'New secret' }).filter({ hasText: 'Secret of laptop' }).locator('code').innerText();
    await page.getByRole('button', { name: 'Regenerate laptop' }).first().click();
    await page.getByRole('region', { name: 'New secret' }).locator('code').filter({ hasNotText: first }).waitFor();
    const second = await page.getByRole('region', { name: 'New secret' }).locator('code').innerText();
    expect(second).not.toBe(first);
    expect((await suite.t.request({ method: 'GET', url: '/v1/tools', key: first })).statusCode).toBe(401);
    expect((await suite.t.request({ method: 'GET', url: '/v1/tools', key: second })).statusCode).toBe(200);
    await page.getByRole('button', { name: 'Revoke laptop' }).click();
    await notice(page).getByText('Revoke done: laptop').waitFor();
    expect((await suite.t.request({ method: 'GET', url: '/v1/tools', key: second })).statusCode).toBe(401);
  });

  it('runs a tool through its generated form and watches it finish', async () => {
    await page.goto(`${baseUrl}/console#/tools`);
    await page.getByRole('searchbox', { name: 'Search names and descriptions' }).fill('sleep');
    await page.getByRole('button', { name: 'Search' }).click();
    // The whole catalogue may still be on the page (Test Sleep among it) until the search answers.
    await until('the search to narrow the list to one tool', async () => ((await page.getByRole('listitem').count()) === 1 ? true : undefined));
    await page.getByRole('link', { name: 'Test Sleep' }).waitFor();
    await shoot(page, '3-tools');
    await page.getByRole('link', { name: 'Test Sleep' }).click();
    await page.getByRole('heading', { name: 'Test Sleep' }).waitFor();

    // The description and the documentation render their Markdown, as elements, never as markup.
    const description = page.locator('main > .markdown').first();
    expect(await description.locator('code').innerText()).toBe('ms');
    expect(await description.locator('strong').innerText()).toBe('optionally');
    await page.getByText('Documentation', { exact: true }).click();
    expect(await page.locator('details .markdown h3').count()).toBeGreaterThan(0);
    expect(await page.locator('details .markdown').innerText()).not.toMatch(/^# /m);

    // The form starts from the tool's first example.
    const ms = page.getByLabel('ms', { exact: true });
    expect(await ms.inputValue()).toBe('0');
    await page.getByText('Filled in from the example "no sleep".').waitFor();
    expect(await ms.getAttribute('required')).not.toBeNull();
    await ms.fill('1500');
    await page.getByRole('button', { name: 'Run' }).click();
    const run = page.getByRole('region', { name: 'Run' });
    await run.locator('.status', { hasText: 'running' }).waitFor();
    await run.locator('.status', { hasText: 'success' }).waitFor({ timeout: 15_000 });
    expect(await run.locator('progress').getAttribute('value')).toBe('100');
    // The progress message reported mid-run is gone once it has ended.
    expect((await run.locator('progress').locator('xpath=following-sibling::span').innerText()).trim()).toBe('100%');
    expect(JSON.parse(await run.getByRole('region', { name: 'Result' }).locator('pre').innerText())).toEqual({ slept_ms: 1500 });
    await shoot(page, '4-tool-run');
  });

  let slowId: string;
  it('cancels a slow async execution from its page', async () => {
    const started = await suite.t.request({ method: 'POST', url: '/v1/tools/test-sleep/invoke?async=true', key: suite.acme.key, payload: { ms: 30_000 } });
    slowId = started.json().execution_id;
    await page.goto(`${baseUrl}/console#/executions/${slowId}`);
    await page.locator('.status', { hasText: 'running' }).waitFor();
    await page.getByText(/\d+% · step \d+/).waitFor(); // live progress over the stream
    await shoot(page, '5-execution-running');
    await page.getByRole('button', { name: 'Cancel execution' }).click();
    await page.locator('.status', { hasText: 'cancelled' }).waitFor();
    const after = await suite.t.request({ method: 'GET', url: `/v1/executions/${slowId}`, key: suite.acme.key });
    expect(after.json().status).toBe('cancelled');
    await shoot(page, '6-execution-cancelled');
  });

  it('lists executions by filter, paged by cursor', async () => {
    await page.goto(`${baseUrl}/console#/executions`);
    await page.getByRole('link', { name: slowId }).waitFor();
    await page.getByLabel('Status').selectOption('cancelled');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.locator('tbody tr', { hasText: 'success' }).first().waitFor({ state: 'detached' });
    expect(await page.locator('tbody tr').count()).toBe(1);
    await page.getByRole('link', { name: slowId }).waitFor();
    await shoot(page, '7-executions');
  });

  it('sets and deletes a secret, showing only its name', async () => {
    await page.goto(`${baseUrl}/console#/secrets`);
    await page.getByLabel('Name').fill('CHAT_WEBHOOK');
    await page.getByLabel('Value').fill('hunter2-very-secret');
    await page.getByRole('button', { name: 'Save secret' }).click();
    await page.getByRole('cell', { name: 'CHAT_WEBHOOK', exact: true }).waitFor();
    expect(await page.content()).not.toContain('hunter2-very-secret');
    await shoot(page, '8-secrets');
    await page.getByRole('button', { name: 'Delete CHAT_WEBHOOK' }).click();
    await page.getByText('No secrets yet.').waitFor();
  });

  it('upstreams: registers OpenAPI operations, tests the connection, turns a tool off and on, deletes; the tools join the catalogue', async () => {
    const pets = await startPetsApi();
    try {
      await page.goto(`${baseUrl}/console#/keys`);
      await page.locator('#nav').getByRole('link', { name: 'Upstreams' }).click();
      await page.getByRole('heading', { name: 'Upstreams', exact: true }).waitFor();
      await page.getByText('No upstreams yet.').waitFor();
      await page.getByLabel('Name').fill('pets');
      await page.getByLabel('Kind').selectOption('openapi');
      await page.getByLabel('URL', { exact: true }).fill(`${pets.origin}/openapi.json`);
      await page.getByLabel('Base URL').fill(`${pets.origin}/api`);
      await page.getByLabel('Operations').fill('listPets, showPetById');
      await page.getByRole('button', { name: 'Register' }).click();
      await notice(page).getByText('Registered pets').waitFor();
      const row = page.getByRole('row').filter({ hasText: 'pets' });
      await row.getByText('serving').waitFor();
      await row.getByText('2 tools on of 2').click();
      await row.getByText('pets.showPetById').waitFor();
      await shoot(page, '8b-upstreams');
      const tools = async () => (await suite.t.request({ method: 'GET', url: '/v1/tools?limit=100', key: suite.acme.key })).json().tools.map((tool: { id: string }) => tool.id);
      expect(await tools()).toEqual(expect.arrayContaining(['pets.listPets', 'pets.showPetById']));

      await page.getByRole('button', { name: 'Test connection pets' }).click();
      await notice(page).getByText('Contacted pets').waitFor();
      await page.getByRole('button', { name: 'Turn off pets.showPetById' }).click();
      await notice(page).getByText('pets.showPetById turned off').waitFor();
      await until('the tool out of the catalogue', async () => (!(await tools()).includes('pets.showPetById') ? true : undefined));
      // The tool list stays open across the page's refreshes.
      await page.getByRole('row').filter({ hasText: 'pets' }).getByText('1 tool on of 2').waitFor();
      await page.getByRole('button', { name: 'Turn on pets.showPetById' }).click();
      await notice(page).getByText('pets.showPetById turned on').waitFor();

      // A refused registration says why and keeps what was typed.
      await page.getByLabel('Name').fill('pets');
      await page.getByLabel('Kind').selectOption('mcp');
      await page.getByLabel('URL', { exact: true }).fill('http://127.0.0.1:9/mcp');
      await page.getByRole('button', { name: 'Register' }).click();
      await notice(page).getByText(/^CONFLICT: /).waitFor();
      expect(await page.getByLabel('URL', { exact: true }).inputValue()).toBe('http://127.0.0.1:9/mcp');

      // The Audit section: each change above, newest first, by this session; filtered by action.
      const audit = page.getByRole('region', { name: 'Audit' });
      await audit.getByText(/^Events 1–3 of 3/).waitFor();
      expect((await audit.locator('tbody tr td:nth-child(2)').allInnerTexts()).map((text) => text.trim())).toEqual(['upstream.tool_enabled', 'upstream.tool_disabled', 'upstream.created']);
      await audit.getByLabel('Audit action').selectOption('upstream.tool_disabled');
      await audit.getByRole('button', { name: 'Filter' }).click();
      await audit.getByText(/^Events 1–1 of 1/).waitFor();
      expect(await audit.locator('tbody').innerText()).toContain('pets.showPetById');
      await shoot(page, '8c-upstream-audit');

      await page.getByRole('button', { name: 'Delete pets' }).click();
      await page.getByText('No upstreams yet.').waitFor();
      expect(await tools()).not.toContain('pets.listPets');
    } finally {
      await pets.close();
    }
  });

  it('webhooks: adds one with its secret shown once, sends a test the receiver verifies, shows it in the log, redelivers, rotates, disables, deletes', async () => {
    const receiver = await startRecordingServer(() => ({ status: 200, body: 'received-ok' }));
    const hookUrl = `${receiver.url}/hooks`;
    try {
      await page.goto(`${baseUrl}/console#/keys`);
      await page.locator('#nav').getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { name: 'Webhooks', exact: true }).waitFor();
      await page.getByLabel('URL', { exact: true }).fill(hookUrl);
      await page.getByLabel('Description').fill('from the console');
      await expect(page.getByRole('checkbox', { name: 'execution.completed' }).isChecked()).resolves.toBe(true);
      await page.getByRole('button', { name: 'Add webhook' }).click();
      const secretBox = page.getByRole('region', { name: 'New secret' });
      const secret = await secretBox.locator('code').innerText();
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      expect(await secretBox.innerText()).toContain('It is shown only this once');
      await secretBox.getByRole('button', { name: 'Copy secret' }).waitFor();
      await page.getByRole('link', { name: hookUrl }).waitFor();
      expect(await page.getByRole('row').filter({ hasText: hookUrl }).innerText()).toMatch(/execution\.completed, execution\.failed\s+all\s+enabled/);
      await shoot(page, '10-webhook-created');
      await page.reload();
      await page.getByRole('link', { name: hookUrl }).waitFor();
      expect(await page.content()).not.toContain(secret);

      await page.getByRole('button', { name: `Send test ${hookUrl}` }).click();
      await notice(page).getByText(/^Ping queued: delivery msg_\w+$/).waitFor();
      const [ping] = await arrived(receiver, 1);
      expect(verified(secret, ping)).toMatchObject({ event: 'ping' });
      const pingId = String(ping.headers['webhook-id']);

      // The log reloads itself while the ping is pending; then shows the attempt with the receiver's answer.
      await page.getByRole('link', { name: hookUrl }).click();
      await page.getByRole('heading', { name: /^Webhook wh_/ }).waitFor();
      const row = page.getByRole('row').filter({ hasText: pingId });
      await row.getByText('delivered').waitFor();
      expect(await row.innerText()).toMatch(/ping[\s\S]*delivered[\s\S]*HTTP 200 · \d+ ms[\s\S]*received-ok/);
      await shoot(page, '11-webhook-deliveries');
      await page.getByLabel('Status').selectOption('failed');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText('No deliveries match.').waitFor();
      await page.getByLabel('Status').selectOption('delivered');
      await page.getByLabel('Event').selectOption('ping');
      await page.getByRole('button', { name: 'Filter' }).click();
      await row.waitFor();
      await page.getByLabel('Status').selectOption('');
      await page.getByRole('button', { name: 'Filter' }).click();

      await row.getByRole('button', { name: `Redeliver ${pingId}` }).click();
      await notice(page).getByText(`Redelivery queued: delivery ${pingId}`).waitFor();
      const [, again] = await arrived(receiver, 2);
      expect(again.headers['webhook-id']).toBe(pingId);
      await until('two attempts in the log', async () => ((await row.getByText('HTTP 200').count()) === 2 ? true : undefined));

      await page.getByRole('button', { name: `Rotate secret ${hookUrl}` }).click();
      const rotated = page.getByRole('region', { name: 'New secret' });
      await rotated.getByText('the old secret keeps signing beside it until').waitFor();
      const newSecret = await rotated.locator('code').innerText();
      expect(newSecret).toMatch(/^whsec_/);
      expect(newSecret).not.toBe(secret);
      await page.getByText('Previous secret signs until').waitFor();
      await page.getByRole('button', { name: `Send test ${hookUrl}` }).click();
      const [, , third] = await arrived(receiver, 3);
      expect(verified(newSecret, third)).toMatchObject({ event: 'ping' });
      expect(verified(secret, third)).toMatchObject({ event: 'ping' }); // both sign during the overlap

      await page.getByRole('button', { name: `Disable ${hookUrl}` }).click();
      await page.getByText('disabled: paused by you').waitFor();
      expect(await page.getByRole('button', { name: `Send test ${hookUrl}` }).count()).toBe(0);
      await page.getByRole('button', { name: `Enable ${hookUrl}` }).click();
      await page.getByRole('button', { name: `Send test ${hookUrl}` }).waitFor();

      await page.getByRole('button', { name: `Delete ${hookUrl}` }).click();
      await page.getByText('No webhooks yet.').waitFor();
      expect(page.url()).toBe(`${baseUrl}/console#/webhooks`);
    } finally {
      await receiver.close();
    }
  });

  it('webhooks: one the service disabled (410) says why, tells a webhook.disabled subscription, and re-enables; the delivery log pages 20 at a time', async () => {
    let answer = 200;
    const receiver = await startRecordingServer(() => ({ status: answer, body: answer === 410 ? 'gone for good' : 'ok' }));
    const alerts = await startRecordingServer(() => ({ status: 204 }));
    try {
      // The alerting subscription, made in the page: webhook.disabled only.
      await page.goto(`${baseUrl}/console#/keys`);
      await page.locator('#nav').getByRole('link', { name: 'Webhooks' }).click();
      await page.getByLabel('URL', { exact: true }).fill(`${alerts.url}/alerts`);
      await page.getByRole('checkbox', { name: 'execution.completed' }).uncheck();
      await page.getByRole('checkbox', { name: 'execution.failed' }).uncheck();
      await page.getByRole('checkbox', { name: 'webhook.disabled' }).check();
      await page.getByRole('button', { name: 'Add webhook' }).click();
      await page.getByRole('region', { name: 'New secret' }).waitFor();
      await page.getByRole('row').filter({ hasText: `${alerts.url}/alerts` }).getByText('webhook.disabled').waitFor();

      const created = await suite.t.request({ method: 'POST', url: '/v1/webhooks', key: suite.acme.key, payload: { url: `${receiver.url}/gone`, events: ['execution.failed'] } });
      const hook = created.json() as { id: string; url: string };
      const ping = () => suite.t.request({ method: 'POST', url: `/v1/webhooks/${hook.id}/test`, key: suite.acme.key });
      for (let i = 0; i < 21; i++) expect((await ping()).statusCode).toBe(202);
      await arrived(receiver, 21);
      answer = 410;
      await ping();
      await until('the 410 to disable the subscription', async () => ((await suite.t.request({ method: 'GET', url: `/v1/webhooks/${hook.id}`, key: suite.acme.key })).json().enabled === false ? true : undefined));

      const [told] = await arrived(alerts, 1);
      expect(JSON.parse(told.body)).toMatchObject({ event: 'webhook.disabled', data: { webhook_id: hook.id, url: hook.url, reason: expect.stringContaining('410') } });

      await page.goto(`${baseUrl}/console#/keys`);
      await page.locator('#nav').getByRole('link', { name: 'Webhooks' }).click(); // load the list afresh
      const row = page.getByRole('row').filter({ hasText: hook.url });
      await row.getByText('disabled: The endpoint answered 410 Gone: the subscription was disabled').waitFor();
      expect(await row.getByRole('button', { name: `Send test ${hook.url}` }).count()).toBe(0);

      await row.getByRole('link', { name: hook.url }).click();
      await page.getByText('Deliveries 1–20 of 22, newest first').waitFor();
      expect(await page.getByRole('row').nth(1).innerText()).toMatch(/ping[\s\S]*failed[\s\S]*HTTP 410[\s\S]*gone for good/);
      await page.getByRole('button', { name: 'Next page' }).click();
      await page.getByText('Deliveries 21–22 of 22, newest first').waitFor();
      expect(await page.getByRole('button', { name: 'Next page' }).isHidden()).toBe(true);
      await page.getByRole('button', { name: 'Previous page' }).click();
      await page.getByText('Deliveries 1–20 of 22, newest first').waitFor();

      answer = 200;
      await page.getByRole('button', { name: `Re-enable ${hook.url}` }).click();
      await notice(page).getByText(`Enabled ${hook.url}`).waitFor();
      await page.getByRole('button', { name: `Send test ${hook.url}` }).waitFor();
      await page.getByRole('button', { name: `Delete ${hook.url}` }).click();
      await page.getByRole('row').filter({ hasText: `${alerts.url}/alerts` }).getByRole('link').click();
      await page.getByLabel('Event').selectOption('webhook.disabled');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText('Deliveries 1–1 of 1, newest first').waitFor();
      await page.getByRole('button', { name: `Delete ${alerts.url}/alerts` }).click();
      await page.getByText('No webhooks yet.').waitFor();
    } finally {
      await Promise.all([receiver.close(), alerts.close()]);
    }
  });

  it('offers the Webhooks page only to a session holding webhooks:manage', async () => {
    const context = await newContext();
    const narrow = await signIn(context, (await sessions().createLink(suite.acme.id, { keyId: 'key_console_test', scopes: new Set(['keys:manage', 'tools:read'] as const), toolIds: null })).path);
    await narrow.locator('#nav').getByRole('link', { name: 'Secrets' }).waitFor();
    expect(await narrow.locator('#nav').getByRole('link', { name: 'Webhooks' }).count()).toBe(0);
    await narrow.goto(`${baseUrl}/console#/webhooks`);
    await narrow.getByText(/^FORBIDDEN: .*webhooks:manage/).waitFor();
    await context.close();
  });

  it('shows usage: the tier, the request window and the month', async () => {
    await page.goto(`${baseUrl}/console#/usage`);
    await page.getByRole('heading', { name: 'Usage' }).waitFor();
    expect(await page.locator('dl.facts').innerText()).toMatch(/Tier\s+enterprise[\s\S]*Requests in the current minute\s+\d+ of 10000[\s\S]*Tool calls this month\s+\d+ \(no cap\)/);
    await shoot(page, '9-usage');
  });

  it('shows a second account none of the first one’s keys, secrets, webhooks or executions', async () => {
    const globex = await suite.t.createAccount('globex');
    const context = await newContext();
    const other = await signIn(context, await linkFor(globex));
    await other.getByRole('cell', { name: 'globex-svc', exact: true }).waitFor();
    expect(await other.content()).not.toContain('ci-deploy');
    const acmeHook = (await suite.t.request({ method: 'POST', url: '/v1/webhooks', key: suite.acme.key, payload: { url: 'https://hooks.example.com/acme-only', events: ['execution.completed'] } })).json() as { id: string };
    await other.goto(`${baseUrl}/console#/webhooks`);
    await other.getByText('No webhooks yet.').waitFor();
    await other.goto(`${baseUrl}/console#/webhooks/${acmeHook.id}`);
    await other.getByText(/^NOT_FOUND: .*not found/).waitFor();
    await suite.t.request({ method: 'DELETE', url: `/v1/webhooks/${acmeHook.id}`, key: suite.acme.key });
    await other.goto(`${baseUrl}/console#/executions`);
    await other.getByText('No executions match.').waitFor();
    await other.goto(`${baseUrl}/console#/executions/${slowId}`);
    await other.getByText(/^NOT_FOUND: .*not found/).waitFor();
    const cookie = await cookieOf(context);
    const overApi = await suite.t.request({ method: 'GET', url: `/v1/executions/${slowId}`, headers: { cookie: `${SESSION_COOKIE}=${cookie.value}` } });
    expect(overApi.statusCode).toBe(404);
    await context.close();
  });

  it('refuses a state-changing request without the session’s CSRF token', async () => {
    const post = (headers: Record<string, string>) =>
      page.evaluate(async (extra) => {
        const response = await fetch('/v1/keys', { method: 'POST', headers: { 'content-type': 'application/json', ...extra }, body: JSON.stringify({ name: 'forged', type: 'user' }) });
        return { status: response.status, body: (await response.json()) as { error?: { code: string; message: string } } };
      }, headers);
    const without = await post({});
    expect(without).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN' } } });
    expect(without.body.error?.message).toContain('x-csrf-token');
    expect((await post({ 'x-csrf-token': 'wrong' })).status).toBe(403);
    const token = await page.evaluate(async () => ((await (await fetch('/console/session')).json()) as { csrf_token: string }).csrf_token);
    expect((await post({ 'x-csrf-token': token })).status).toBe(201);
    // Reading needs no token; a bearer key never needs one.
    expect(await page.evaluate(async () => (await fetch('/v1/keys')).status)).toBe(200);
  });

  it('ends a session when idle, when revoked and when signed out', async () => {
    const { value } = await cookieOf(acme);
    const idle = await sessions().verify(value, new Date(Date.now() + 31 * 60_000));
    expect(idle).toMatchObject({ ok: false, reason: expect.stringContaining('expired') });

    // Revoked from elsewhere (a key with keys:manage): its next request is refused.
    const context = await newContext();
    const revokedPage = await signIn(context, await linkFor(suite.acme));
    const listed = (await suite.t.request({ method: 'GET', url: '/v1/console/sessions', key: suite.acme.key })).json();
    const mine = (await cookieOf(context)).value;
    const sessionId = await revokedPage.evaluate(async () => ((await (await fetch('/console/session')).json()) as { session: { id: string } }).session.id);
    expect(listed.sessions.map((s: { id: string }) => s.id)).toContain(sessionId);
    expect(JSON.stringify(listed)).not.toContain(mine);
    expect((await suite.t.request({ method: 'DELETE', url: `/v1/console/sessions/${sessionId}`, key: suite.acme.key })).statusCode).toBe(200);
    await revokedPage.goto(`${baseUrl}/console#/usage`);
    await revokedPage.getByRole('heading', { name: 'Not signed in' }).waitFor();
    await context.close();

    await page.goto(`${baseUrl}/console#/keys`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Not signed in' }).waitFor();
    await shoot(page, '10-signed-out');
    expect(await cookieOf(acme)).toBeUndefined();
    const replayed = await suite.t.request({ method: 'GET', url: '/v1/keys', headers: { cookie: `${SESSION_COOKIE}=${value}` } });
    expect(replayed.statusCode).toBe(401);
    expect(replayed.json().error.message).toContain('signed out');
  });

  it('answers bad console requests with the error envelope', async () => {
    const host = new URL(baseUrl).host;
    const signIn = (options: { payload?: string | object; headers?: Record<string, string> }) => suite.t.request({ method: 'POST', url: '/console/session', ...options, headers: { origin: baseUrl, host, ...options.headers } });
    expect((await signIn({})).json().error.code).toBe('INVALID_REQUEST');
    expect((await signIn({ payload: 'token', headers: { 'content-type': 'text/plain' } })).statusCode).toBe(415);
    const withKey = await suite.t.request({ method: 'GET', url: '/console/session', key: suite.acme.key });
    expect(withKey.statusCode).toBe(400);
    expect(withKey.json().error.message).toContain('not signed in to the console');
    const noKeyManage = await suite.t.createKey(suite.acme.id, { name: 'reader', type: 'temporary', expires_in: 600 });
    expect((await suite.t.request({ method: 'POST', url: '/v1/console/links', key: noKeyManage })).statusCode).toBe(403);
    expect((await suite.t.request({ method: 'DELETE', url: '/v1/console/sessions/ses_nope', key: suite.acme.key })).statusCode).toBe(404);
    expect((await suite.t.request({ method: 'GET', url: '/console/assets/nope.js' })).statusCode).toBe(404);
    expect((await suite.t.request({ method: 'GET', url: '/console/assets/..%2Ftsconfig.json' })).statusCode).toBe(404);
    expect((await suite.t.request({ method: 'GET', url: '/console/assets/index.html' })).statusCode).toBe(404);
    // A cookie that cannot be a session is no credential at all; a well-formed unknown one is refused by name.
    const garbage = await suite.t.request({ method: 'GET', url: '/v1/keys', headers: { cookie: `${SESSION_COOKIE}=<script>` } });
    expect(garbage.json().error).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringContaining('Missing API key') });
    const unknown = await suite.t.request({ method: 'GET', url: '/v1/keys', headers: { cookie: `other=1; ${SESSION_COOKIE}=${'a'.repeat(43)}` } });
    expect(unknown.json().error.message).toContain('Unknown console session');
    const usage = await suite.t.request({ method: 'GET', url: '/v1/usage', key: noKeyManage });
    expect(usage.json()).toMatchObject({ tier: 'enterprise', window: { limit: 10000, used: 1 }, month: { limit: null } });
  });

  it('tos console link (operator CLI) prints a link the service accepts, with a Secure cookie under https', async () => {
    const { env, cleanup } = await DATABASE_MODES.find((m) => m.name === 'pglite')!.prepare();
    const cli = (...args: string[]) => run(process.execPath, ['-r', 'ts-node/register/transpile-only', CLI, ...args], { env: { ...process.env, ...env, PUBLIC_URL: 'https://tos.example.test', NODE_OPTIONS: '' } });
    try {
      await cli('accounts', 'create', '--name', 'solo');
      const link = JSON.parse((await cli('console', 'link', '--account', 'solo', '--json')).stdout);
      expect(link.url).toMatch(/^https:\/\/tos\.example\.test\/console#\/sign-in\/[0-9A-Za-z]{43}$/);
      const service = await startTestApp({ env: { ...env, PUBLIC_URL: 'https://tos.example.test' } });
      try {
        const signedIn = await service.request({ method: 'POST', url: '/console/session', headers: { origin: 'https://tos.example.test' }, payload: { token: tokenOf(link.path) } });
        expect(signedIn.statusCode).toBe(201);
        expect(signedIn.json()).toMatchObject({ account: { name: 'solo' }, csrf_token: expect.any(String) });
        expect(signedIn.headers['set-cookie']).toMatch(/^tos_console=[0-9A-Za-z]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict; Secure$/);
      } finally {
        await service.close();
        releaseDataDir(env.DATA_DIR);
      }
    } finally {
      await cleanup();
    }
  }, 120_000); // two CLI processes under ts-node and a service boot

  it('loads nothing from anywhere but the service, without script errors', () => {
    expect(requested.filter((url) => !url.startsWith(`${baseUrl}/`))).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
