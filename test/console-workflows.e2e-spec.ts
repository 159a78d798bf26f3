/**
 * The console's workflow, schedule and trigger pages (docs/console.md) in headless Chromium against
 * the listening service: the editor showing the server's validation problems beside their lines,
 * saving, versions, a run started from the form built from the inputs, and the run's page drawing
 * the DAG whose nodes follow the steps live; cancel; another account's run is not found; a schedule
 * of the workflow with its next runs, paused and resumed; a trigger with its secret shown once and
 * its events, accepted and refused with why. Screenshots land in a temp folder named in the output.
 */
import { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ConsoleSessions } from '../src/sessions/console-sessions.service';
import { TestAccount, useTestApp } from './support/app';
import { describeWithChromium, launchChromium, signIn, watchedContext } from './support/console-browser';
import { ENGINE_MODES } from './support/engines';
import { TestToolsModule } from './support/test-tools.module';

/** Two problems in two steps: a literal the tool refuses, and an expression reading a step that is not upstream. */
const BROKEN = `name: console-dag
description: Two sleeps side by side, then a sum
inputs:
  a: { type: integer, required: true, description: Added to the sleeps }
steps:
  - id: left
    tool: test-sleep
    inputs:
      ms: -5
  - id: right
    tool: test-sleep
    inputs: { ms: 3500 }
  - id: sum
    tool: json-transform
    needs: [left]
    inputs:
      expression: a + l + r
      data:
        a: "\${{ inputs.a }}"
        l: "\${{ steps.left.result.slept_ms }}"
        r: "\${{ steps.right.result.slept_ms }}"
outputs:
  total: "\${{ steps.sum.result.result }}"
`;
const FIXED = BROKEN.replace('ms: -5', 'ms: 1500').replace('needs: [left]', 'needs: [left, right]');

/** The 1-based line of the first line of `text` that contains `part`. */
const lineWith = (text: string, part: string) => text.split('\n').findIndex((line) => line.includes(part)) + 1;

describeWithChromium('browser console: workflows', () => {
  // No schedule tick is due during the suite (the loop idles); a trigger's event starts its target at once.
  const suite = useTestApp(ENGINE_MODES.find((m) => m.name === 'embedded')!, { extensions: [TestToolsModule], env: { RECONCILE_INTERVAL_SECONDS: '1', SECRETS_KEY: randomBytes(32).toString('base64'), ORCHESTRATION_POLL_MS: '0' } });
  const shots = mkdtempSync(path.join(tmpdir(), 'tos-console-workflows-'));
  let browser: Browser;
  let baseUrl: string;
  let context: BrowserContext;
  let page: Page;
  const requested: string[] = [];
  const pageErrors: string[] = [];
  let workflowId: string;

  const shoot = (target: Page, name: string) => target.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
  const linkFor = async (account: TestAccount) => (await suite.t.app.get(ConsoleSessions).createLink(account.id, null)).path;
  const node = (step: string) => page.locator(`svg.dag [data-step="${step}"]`);

  beforeAll(async () => {
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = (await suite.t.app.getUrl()).replace('[::1]', '127.0.0.1');
    browser = await launchChromium();
    context = await watchedContext(browser, requested, pageErrors);
    page = await signIn(context, baseUrl, await linkFor(suite.acme));
    console.log(`console screenshots: ${shots}`);
  });
  afterAll(async () => browser?.close());

  it('shows the problems of a refused document beside their lines, by step and field, then saves the fixed one', async () => {
    await page.locator('#nav').getByRole('link', { name: 'Workflows' }).click();
    await page.getByText('No workflows yet.').waitFor();
    const editor = page.getByRole('textbox', { name: 'New workflow document (YAML or JSON)' });
    await editor.fill(BROKEN);
    await page.getByRole('button', { name: 'Create workflow' }).click();

    const problems = page.getByRole('region', { name: 'Problems' });
    await problems.getByText('The workflow was not saved: 2 problems.').waitFor();
    const literal = problems.locator('li[data-step="left"]');
    expect(await literal.innerText()).toMatch(new RegExp(`^line ${lineWith(BROKEN, 'ms: -5')}\\s*step left\\s*inputs\\.ms: the literal does not fit tool 'test-sleep'`));
    const upstream = problems.locator('li[data-step="sum"]');
    expect(await upstream.innerText()).toMatch(new RegExp(`^line ${lineWith(BROKEN, 'r: "$')}\\s*step sum\\s*inputs\\.data\\.r: reads steps\\.right, which is not upstream of 'sum' \\(add it to needs\\)`));
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    // The gutter marks exactly the lines at fault.
    const marked = await page.locator('.gutter .bad').allInnerTexts();
    expect(marked.map((text) => Number(text.replace('●', '').trim()))).toEqual([lineWith(BROKEN, 'ms: -5'), lineWith(BROKEN, 'r: "$')]);
    // A problem's line button puts the caret on that line.
    await upstream.getByRole('button').click();
    expect(await editor.evaluate((area: { value: string; selectionStart: number; selectionEnd: number }) => area.value.slice(area.selectionStart, area.selectionEnd))).toContain('r: "${{ steps.right');
    await shoot(page, '1-workflow-problems');

    // Not parseable at all: the parser's line is marked.
    await editor.fill('name: x\nsteps: [\n');
    await page.getByRole('button', { name: 'Create workflow' }).click();
    await problems.getByText(/not valid YAML/).waitFor();

    await editor.fill(FIXED);
    await page.getByRole('button', { name: 'Create workflow' }).click();
    await page.getByRole('heading', { name: 'console-dag' }).waitFor();
    workflowId = decodeURIComponent(page.url().split('#/workflows/')[1]);
    expect(workflowId).toMatch(/^wf_/);
    await page.getByText('version 1 · 3 steps · not published').waitFor();
    const saved = await suite.t.request({ method: 'GET', url: `/v1/workflows/${workflowId}`, key: suite.acme.key });
    expect(saved.json().document.steps[2].needs).toEqual(['left', 'right']);
  });

  it('runs it from the form built from its inputs; the run page draws the DAG and every node reaches success live', async () => {
    const input = page.getByLabel('a', { exact: true });
    expect(await input.getAttribute('type')).toBe('number');
    expect(await input.getAttribute('required')).not.toBeNull();
    await input.fill('7');
    await page.getByRole('button', { name: 'Run' }).click();
    await page.getByRole('heading', { name: /^Run exec_/ }).waitFor();
    const runId = page.url().split('#/runs/')[1];

    expect(await page.locator('svg.dag .dag-node').count()).toBe(3);
    const edges = await page.locator('svg.dag path.dag-edge').evaluateAll((paths) => paths.map((p) => `${p.getAttribute('data-from')}→${p.getAttribute('data-to')}`));
    expect(edges.sort()).toEqual(['left→sum', 'right→sum']);
    // Drawn from the first read, then moved by the stream alone: left ends while right still sleeps (2 s longer, for a loaded machine).
    await page.locator('svg.dag [data-step="left"][data-status="success"]').waitFor({ timeout: 15_000 });
    expect(await node('right').getAttribute('data-status')).toBe('running');
    expect(await node('sum').getAttribute('data-status')).toBe('pending');
    await shoot(page, '2-run-live');
    await page.locator('svg.dag [data-step="sum"][data-status="success"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('svg.dag [data-status="success"]').count()).toBe(3);
    const run = page.getByRole('region', { name: 'Run' });
    await run.locator('.status', { hasText: 'success' }).waitFor();
    expect(await run.locator('progress').getAttribute('value')).toBe('100');
    expect(JSON.parse(await page.getByRole('region', { name: 'Outputs' }).locator('pre').innerText())).toEqual({ total: 7 + 1500 + 3500 });
    expect(await run.getByRole('button', { name: 'Cancel run' }).isVisible()).toBe(false);
    await shoot(page, '3-run-success');

    // The run's execution page leads to its graph; the graph's nodes to their calls.
    await page.goto(`${baseUrl}/console#/executions/${runId}`);
    await page.getByRole('link', { name: 'The run’s graph, live' }).click();
    await node('sum').waitFor();
    await page.locator('svg.dag a:has([data-step="sum"])').click();
    await page.getByRole('heading', { name: /^Execution exec_/ }).waitFor();
    await page.getByText('json-transform', { exact: true }).waitFor();
  });

  it('saves a new version and lists both; a refused save keeps the version and shows why', async () => {
    await page.goto(`${baseUrl}/console#/workflows/${workflowId}`);
    const editor = page.getByRole('textbox', { name: 'Document of console-dag (YAML or JSON)' });
    const document = JSON.parse(await editor.inputValue());
    await editor.fill(JSON.stringify({ ...document, description: 'Second version' }, null, 2));
    await page.getByRole('button', { name: 'Save new version' }).click();
    await page.getByText('Saved console-dag version 2.').waitFor();
    await page.getByRole('cell', { name: '2 (current)' }).waitFor();
    await page.getByRole('button', { name: 'Edit from version 1' }).waitFor();
    expect(await page.getByRole('region', { name: 'Runs' }).locator('tbody tr').count()).toBe(1);
    // A refused save keeps the version and shows why.
    await editor.fill(JSON.stringify({ ...document, steps: [{ id: 'only', tool: 'no-such-tool', inputs: {} }] }, null, 2));
    await page.getByRole('button', { name: 'Save new version' }).click();
    await page.getByRole('region', { name: 'Problems' }).locator('li[data-step="only"]').getByText("unknown tool 'no-such-tool'").waitFor();
    expect((await suite.t.request({ method: 'GET', url: `/v1/workflows/${workflowId}`, key: suite.acme.key })).json().version).toBe(2);
    await shoot(page, '4-workflow-versions');
  });

  it('cancels a run from its page; another account finds no such run', async () => {
    const slow = await suite.t.request({ method: 'POST', url: '/v1/workflows', key: suite.acme.key, payload: { name: 'console-slow', steps: [{ id: 'nap', tool: 'test-sleep', inputs: { ms: 30_000 } }] } });
    const started = await suite.t.request({ method: 'POST', url: `/v1/workflows/${slow.json().id}/runs?async=true`, key: suite.acme.key, payload: {} });
    const runId = started.json().execution_id;
    await page.goto(`${baseUrl}/console#/runs/${runId}`);
    await page.locator('svg.dag [data-step="nap"][data-status="running"]').waitFor();
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.getByRole('region', { name: 'Run' }).locator('.status', { hasText: 'cancelled' }).waitFor();
    expect((await suite.t.request({ method: 'GET', url: `/v1/executions/${runId}`, key: suite.acme.key })).json().status).toBe('cancelled');

    const globex = await suite.t.createAccount('globex-workflows');
    const other = await watchedContext(browser, requested, pageErrors);
    const otherPage = await signIn(other, baseUrl, await linkFor(globex));
    await otherPage.goto(`${baseUrl}/console#/runs/${runId}`);
    await otherPage.getByText(/^NOT_FOUND: /).waitFor();
    await otherPage.goto(`${baseUrl}/console#/workflows`);
    await otherPage.getByText('No workflows yet.').waitFor();
    await other.close();
  });

  /** The id of acme's service key, the one schedules and triggers made in the console run as. */
  const acmeKeyId = async () => ((await suite.t.request({ method: 'GET', url: '/v1/keys?limit=100', key: suite.acme.key })).json().keys as { id: string; name: string }[]).find((k) => k.name === 'acme-svc')!.id;
  /** Fills a schedule's or trigger's target fields and picks the key it runs as. */
  const fillTarget = async (form: Locator, kind: 'tool' | 'workflow', id: string, inputs: string, keyId: string) => {
    await form.getByLabel('Target', { exact: true }).selectOption(kind);
    await form.getByLabel('Tool or workflow').fill(id);
    await form.getByLabel('Target inputs (JSON)').fill(inputs);
    await form.getByLabel('Runs as key').selectOption(keyId);
  };

  it('creates a schedule of the workflow as a key, lists it with its next runs, pauses and resumes it', async () => {
    await page.goto(`${baseUrl}/console#/keys`);
    await page.locator('#nav').getByRole('link', { name: 'Schedules' }).click();
    await page.getByText('No schedules yet.').waitFor();
    // Left before it had loaded, the keys page draws nowhere near this one.
    await page.waitForLoadState('networkidle');
    expect(await page.getByRole('heading', { name: 'API keys' }).count()).toBe(0);
    const form = page.getByRole('form', { name: 'New schedule' });
    const keyId = await acmeKeyId();
    await fillTarget(form, 'workflow', 'console-dag', '{ "a": 1 }', keyId);
    await form.getByLabel('Cron').fill('30 2 * * *');
    await form.getByLabel('Time zone').fill('Europe/Berlin');
    await form.getByRole('button', { name: 'Create schedule' }).click();
    await page.locator('#notice').getByText('Schedule created.').waitFor();

    const [schedule] = (await suite.t.request({ method: 'GET', url: '/v1/schedules', key: suite.acme.key })).json().schedules;
    expect(schedule).toMatchObject({ target: { workflow: workflowId, inputs: { a: 1 } }, key_id: keyId, paused: false });
    expect(schedule.next_runs).toHaveLength(5);
    for (const at of schedule.next_runs) expect(new Date(at).toLocaleTimeString('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' })).toBe('02:30');
    const row = page.getByRole('row').filter({ hasText: 'workflow console-dag' });
    const runs = row.getByRole('list', { name: `Next runs of ${schedule.id}` }).getByRole('listitem');
    // The list is drawn after the notice, when the page has read the schedules again: wait for it as a reader does.
    await runs.nth(schedule.next_runs.length - 1).waitFor();
    const shown = await runs.allInnerTexts();
    expect(shown).toEqual(await page.evaluate((times: string[]) => times.map((at) => new Date(at).toLocaleString()), schedule.next_runs));
    expect(await row.innerText()).toMatch(/30 2 \* \* \* \(Europe\/Berlin\)[\s\S]*skip · none[\s\S]*active/);
    await shoot(page, '5-schedules');

    await row.getByRole('button', { name: `Pause ${schedule.id}` }).click();
    await row.getByText('paused', { exact: true }).waitFor();
    expect(await row.getByRole('listitem').count()).toBe(0);
    expect((await suite.t.request({ method: 'GET', url: `/v1/schedules/${schedule.id}`, key: suite.acme.key })).json()).toMatchObject({ paused: true, next_run_at: null });
    await shoot(page, '6-schedule-paused');
    await row.getByRole('button', { name: `Resume ${schedule.id}` }).click();
    await row.getByText('active', { exact: true }).waitFor();
    expect((await suite.t.request({ method: 'GET', url: `/v1/schedules/${schedule.id}`, key: suite.acme.key })).json()).toMatchObject({ paused: false, key_id: keyId });

    await row.getByRole('link', { name: 'workflow console-dag' }).click();
    await page.getByRole('heading', { name: `Schedule ${schedule.id}` }).waitFor();
    await page.getByText('No runs yet.').waitFor();
    await page.goBack();
    await page.getByRole('button', { name: `Delete ${schedule.id}` }).click();
    await page.getByText('No schedules yet.').waitFor();
  });

  it('creates a trigger whose secret is shown once, with its inbound URL; its events show accepted and refused, and why', async () => {
    await page.locator('#nav').getByRole('link', { name: 'Triggers' }).click();
    await page.getByText('No triggers yet.').waitFor();
    const form = page.getByRole('form', { name: 'New trigger' });
    await fillTarget(form, 'tool', 'test-sleep', '{ "ms": 1 }', await acmeKeyId());
    await form.getByLabel('Starts on').selectOption('github');
    await form.getByLabel('Filter (optional)').fill("headers.`x-github-event` = 'push'");
    await form.getByRole('button', { name: 'Create trigger' }).click();

    const secretBox = page.getByRole('region', { name: 'New secret' });
    const secret = await secretBox.locator('code').innerText();
    expect(secret.length).toBeGreaterThanOrEqual(16);
    expect(await secretBox.innerText()).toContain('It is shown only this once');
    const [trigger] = (await suite.t.request({ method: 'GET', url: '/v1/triggers', key: suite.acme.key })).json().triggers;
    const inbound = `${baseUrl}/v1/triggers/${trigger.id}/events`;
    expect(await secretBox.innerText()).toContain(inbound);
    await page.getByRole('row').filter({ hasText: trigger.id }).getByText(inbound).waitFor();
    await shoot(page, '7-trigger-created');
    await page.reload();
    await page.getByRole('link', { name: trigger.id }).waitFor();
    expect(await page.content()).not.toContain(secret);

    const send = (event: string, delivery: string, key = secret) => {
      const body = JSON.stringify({ ref: 'refs/heads/main' });
      return suite.t.request({ method: 'POST', url: trigger.url, payload: body, headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': delivery, 'x-hub-signature-256': `sha256=${createHmac('sha256', key).update(body).digest('hex')}` } });
    };
    expect((await send('push', 'd-1')).json()).toMatchObject({ accepted: true });
    expect((await send('issues', 'd-2')).json()).toMatchObject({ accepted: false });
    expect((await send('push', 'd-3', 'not-the-secret-at-all')).statusCode).toBe(401);

    await page.getByRole('link', { name: trigger.id }).click();
    await page.getByRole('heading', { name: `Trigger ${trigger.id}` }).waitFor();
    const events = page.getByRole('table');
    await events.getByText('accepted (started)').waitFor();
    const refusedRows = await events.getByRole('row').filter({ hasText: 'refused' }).allInnerTexts();
    expect(refusedRows).toHaveLength(2);
    expect(refusedRows.some((text) => /refused \(filtered\)[\s\S]*d-2/.test(text))).toBe(true);
    expect(refusedRows.some((text) => /refused \(refused\)\s+\S[\s\S]*signature/i.test(text))).toBe(true);
    await shoot(page, '8-trigger-events');
  });

  it('loads nothing from anywhere but the service, without script errors', () => {
    expect(requested.filter((url) => !url.startsWith(`${baseUrl}/`))).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
