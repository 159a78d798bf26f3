/**
 * Webhooks (docs/API.md#webhooks) on both engines: subscriptions and their secret shown once, a
 * finished execution delivered signed (checked by the official `standardwebhooks` library and by
 * the documented X-Signature bytes), retries under one webhook-id until a 2xx, Retry-After, 410
 * disabling, an endpoint that never answers, egress refused at delivery, a narrowed key,
 * redelivery and a rotated secret signing beside the old one. Receivers listen on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { WebhookDispatcher } from '../src/webhooks/webhook-dispatcher';
import { useTestApp, type TestAccount } from './support/app';
import { describeEachEngine } from './support/engines';
import { freePort } from './support/free-port';
import { until } from './support/poll';
import { startRecordingServer, type Answer, type RecordedRequest, type RecordingServer } from './support/recording-server';
import { TestToolsModule } from './support/test-tools.module';

/** Retries 0.3 s apart (three of them), attempts cut at 2 s: a schedule a test can run through. */
const ENV = {
  SECRETS_KEY: randomBytes(32).toString('base64'),
  EGRESS_ALLOW: '127.0.0.1',
  WEBHOOK_RETRY_SCHEDULE: '0.3,0.3,0.3',
  WEBHOOK_POLL_MS: '50',
  WEBHOOK_TIMEOUT_MS: '2000',
};

/** The X-Signature of docs/API.md#webhooks: hex HMAC-SHA-256, under the secret's base64 bytes, of `<X-Timestamp>.<body without its signature member>`. */
function xSignature(secret: string, timestamp: string, body: string): string {
  const unsigned = body.slice(0, body.lastIndexOf(',"signature":')) + '}';
  return `sha256=${createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64')).update(`${timestamp}.${unsigned}`).digest('hex')}`;
}

const standardHeaders = ({ headers }: RecordedRequest) => ({
  'webhook-id': String(headers['webhook-id']),
  'webhook-timestamp': String(headers['webhook-timestamp']),
  'webhook-signature': String(headers['webhook-signature']),
});

describeEachEngine('webhooks', (mode) => {
  const suite = useTestApp(mode, { env: ENV, extensions: [TestToolsModule] });
  const receivers: RecordingServer[] = [];
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  });

  /** A loopback receiver answering as `answer` says (200 by default); closed after the test. */
  const receiver = async (answer: (request: RecordedRequest, nth: number) => Answer = () => ({ status: 200, body: 'ok' })) => {
    let nth = 0;
    const server = await startRecordingServer((request) => answer(request, ++nth));
    receivers.push(server);
    return server;
  };

  let accounts = 0;
  const account = () => suite.t.createAccount(`hooks-${++accounts}`);

  const subscribe = async (owner: TestAccount, body: object) => {
    const res = await suite.t.request({ method: 'POST', url: '/v1/webhooks', key: owner.key, payload: body });
    expect(res.statusCode).toBe(201);
    return res.json();
  };
  const invoke = async (owner: TestAccount, inputs: object, query = '?async=true', toolId = 'json-transform') => {
    const res = await suite.t.request({ method: 'POST', url: `/v1/tools/${toolId}/invoke${query}`, key: owner.key, payload: { inputs } });
    expect(res.statusCode).toBeLessThan(300);
    return res.json().execution_id as string;
  };
  const log = async (owner: TestAccount, webhookId: string, query = '') => {
    const res = await suite.t.request({ method: 'GET', url: `/v1/webhooks/${webhookId}/deliveries${query}`, key: owner.key });
    expect(res.statusCode).toBe(200);
    return res.json();
  };
  const received = (server: RecordingServer, count: number) => until(`${count} webhook request(s)`, async () => (server.received.length >= count ? server.received : undefined), 15_000);
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1_000));

  it('creates with the secret shown once, lists, gets, patches and deletes', async () => {
    const owner = await account();
    const created = await subscribe(owner, { url: 'https://hooks.example.com/tos', events: ['execution.completed'], description: 'ci' });
    expect(created).toMatchObject({ id: expect.stringMatching(/^wh_/), url: 'https://hooks.example.com/tos', events: ['execution.completed'], tool_ids: null, enabled: true, secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/) });

    const got = await suite.t.request({ method: 'GET', url: `/v1/webhooks/${created.id}`, key: owner.key });
    expect(got.json()).toEqual({ ...created, secret: undefined });
    expect(got.body).not.toContain(created.secret.slice('whsec_'.length));
    const listed = await suite.t.request({ method: 'GET', url: '/v1/webhooks?limit=10', key: owner.key });
    expect(listed.json()).toMatchObject({ webhooks: [got.json()], total: 1, limit: 10, offset: 0 });
    expect(listed.body).not.toContain(created.secret.slice('whsec_'.length));
    const stored = await suite.t.app.get(DataSource).query('SELECT secret_sealed FROM webhook_subscriptions WHERE id = $1', [created.id]);
    expect(JSON.stringify(stored)).not.toContain(created.secret.slice('whsec_'.length));

    const patched = await suite.t.request({ method: 'PATCH', url: `/v1/webhooks/${created.id}`, key: owner.key, payload: { events: ['execution.failed', 'execution.completed'], enabled: false } });
    expect(patched.json()).toMatchObject({ events: ['execution.completed', 'execution.failed'], enabled: false, description: 'ci' });

    expect((await suite.t.request({ method: 'DELETE', url: `/v1/webhooks/${created.id}`, key: owner.key })).statusCode).toBe(204);
    expect((await suite.t.request({ method: 'GET', url: `/v1/webhooks/${created.id}`, key: owner.key })).statusCode).toBe(404);
    const other = await account();
    expect((await suite.t.request({ method: 'GET', url: `/v1/webhooks/${created.id}`, key: other.key })).statusCode).toBe(404);
  });

  it('refuses at registration a URL the egress policy refuses, and an unknown event', async () => {
    const owner = await account();
    for (const url of ['http://10.0.0.1/hook', 'http://127.0.0.2:9/hook', 'http://[::1]:9/hook', 'ftp://127.0.0.1/hook', 'http://user:pw@127.0.0.1/hook']) {
      const res = await suite.t.request({ method: 'POST', url: '/v1/webhooks', key: owner.key, payload: { url, events: ['execution.completed'] } });
      expect({ url, status: res.statusCode }).toEqual({ url, status: 400 });
    }
    const res = await suite.t.request({ method: 'POST', url: '/v1/webhooks', key: owner.key, payload: { url: 'http://127.0.0.1:9/', events: ['execution.started'] } });
    expect(res.statusCode).toBe(400);
  });

  // Before any test leaves a pending delivery behind: the claim below sees every due row of the database.
  it("accounts take turns: one account's backlog does not hold back another's delivery", async () => {
    const [busy, quiet] = [await account(), await account()];
    const [busyHook, quietHook] = [
      await subscribe(busy, { url: 'http://127.0.0.1:9/busy', events: ['execution.completed'] }),
      await subscribe(quiet, { url: 'http://127.0.0.1:9/quiet', events: ['execution.completed'] }),
    ];
    // Due an hour from now, so the running dispatcher leaves them be; the claim below looks two hours ahead.
    const at = (ms: number) => new Date(Date.now() + 3_600_000 + ms).toISOString();
    const db = suite.t.app.get(DataSource);
    const insert = (id: string, hook: { id: string }, owner: TestAccount, dueAt: string) =>
      db.query(
        `INSERT INTO webhook_deliveries (id, subscription_id, account_id, event, execution_id, data, event_at, status, attempt_count, next_attempt_at, attempts, created_at)
         VALUES ($1, $2, $3, 'execution.completed', NULL, '{}', now(), 'pending', 0, $4, '[]', now())`,
        [id, hook.id, owner.id, dueAt],
      );
    // The busy account's four are older than the quiet one's; the endpoint cap (4) would take them all.
    for (let i = 0; i < 4; i++) await insert(`msg_busy${i}`, busyHook, busy, at(i));
    await insert('msg_quiet', quietHook, quiet, at(100));
    try {
      const claimed = (await suite.t.app.get(WebhookDispatcher)['claim'](new Date(Date.now() + 7_200_000), 2)) as Array<{ id: string }>;
      expect(claimed.map((delivery) => delivery.id).sort()).toEqual(['msg_busy0', 'msg_quiet']);
    } finally {
      await db.query(`DELETE FROM webhook_deliveries WHERE id IN ('msg_busy0', 'msg_busy1', 'msg_busy2', 'msg_busy3', 'msg_quiet')`);
    }
  });

  it('delivers a completed execution once, signed: verified by standardwebhooks and by X-Signature', async () => {
    const owner = await account();
    const server = await receiver();
    const hook = await subscribe(owner, { url: `${server.url}/hook`, events: ['execution.completed'], tool_ids: ['json-transform'] });
    const executionId = await invoke(owner, { expression: '$sum(n)', data: { n: [1, 2, 3] } });
    const [request] = await received(server, 1);

    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toBe('application/json');
    const verified = new Webhook(hook.secret).verify(request.body, standardHeaders(request));
    expect(verified).toEqual({
      event: 'execution.completed',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: { execution_id: executionId, tool_id: 'json-transform', status: 'success', result: { result: 6 } },
      signature: request.headers['x-signature'],
    });
    expect(request.headers['x-timestamp']).toBe(request.headers['webhook-timestamp']);
    expect(request.headers['x-signature']).toBe(xSignature(hook.secret, String(request.headers['x-timestamp']), request.body));
    expect(() => new Webhook(`whsec_${randomBytes(24).toString('base64')}`).verify(request.body, standardHeaders(request))).toThrow();

    await settle();
    expect(server.received).toHaveLength(1);
    const { deliveries } = await log(owner, hook.id);
    expect(deliveries).toEqual([
      expect.objectContaining({ id: request.headers['webhook-id'], event: 'execution.completed', execution_id: executionId, status: 'delivered', attempts: [expect.objectContaining({ status_code: 200, response_excerpt: 'ok', error: null, latency_ms: expect.any(Number) })] }),
    ]);
  });

  it('narrows by event and tool; a sync execution and a failed one deliver too; a large result is a link', async () => {
    const owner = await account();
    const server = await receiver();
    await subscribe(owner, { url: server.url, events: ['execution.failed'] });
    await subscribe(owner, { url: `${server.url}/sleep`, events: ['execution.completed'], tool_ids: ['test-sleep'] });
    const all = await subscribe(owner, { url: `${server.url}/all`, events: ['execution.completed'] });

    const failed = await invoke(owner, { mode: 'tool-error' }, '?async=true', 'test-misbehave');
    const sync = await invoke(owner, { expression: '$pad("", 70000, "x")', data: {} }, '');
    await received(server, 2);
    await settle();
    const byPath = Object.fromEntries(server.received.map((request) => [request.url, JSON.parse(request.body)]));
    expect(Object.keys(byPath).sort()).toEqual(['/', '/all']);
    expect(byPath['/']).toMatchObject({ event: 'execution.failed', data: { execution_id: failed, tool_id: 'test-misbehave', status: 'error', result: expect.objectContaining({ code: 'TOOL_ERROR' }) } });
    expect(byPath['/all'].data).toEqual({ execution_id: sync, tool_id: 'json-transform', status: 'success', result: { truncated: true, size_bytes: expect.any(Number), url: `/v1/executions/${sync}` } });
    expect(byPath['/all'].data.result.size_bytes).toBeGreaterThan(70_000);
    expect((await log(owner, all.id, '?event=execution.completed&status=delivered')).total).toBe(1);
    expect((await log(owner, all.id, '?status=failed')).total).toBe(0);
  });

  it('retries a receiver that is down until it answers 2xx, under one webhook-id, honouring Retry-After; nothing after', async () => {
    const owner = await account();
    const server = await receiver((_, nth) => (nth === 1 ? { status: 503, headers: { 'retry-after': '1' } } : nth === 2 ? { status: 500, body: 'down' } : { status: 204 }));
    const hook = await subscribe(owner, { url: server.url, events: ['execution.completed'] });
    await invoke(owner, { expression: '1', data: {} });
    const requests = await received(server, 3);
    await settle();
    expect(server.received).toHaveLength(3);
    expect(new Set(requests.map((request) => request.headers['webhook-id'])).size).toBe(1);
    for (const request of requests) expect(() => new Webhook(hook.secret).verify(request.body, standardHeaders(request))).not.toThrow();

    const [delivery] = (await log(owner, hook.id)).deliveries;
    expect(delivery).toMatchObject({ id: requests[0].headers['webhook-id'], status: 'delivered' });
    expect(delivery.attempts.map((attempt: { status_code: number }) => attempt.status_code)).toEqual([503, 500, 204]);
    expect(delivery.attempts[1].response_excerpt).toBe('down');
    // Retry-After: 1 outweighs the 0.3 s step.
    expect(Date.parse(delivery.attempts[1].at) - Date.parse(delivery.attempts[0].at)).toBeGreaterThanOrEqual(900);
  });

  it('a delivery held by a process that died mid-retry is sent once its lease lapses, not before', async () => {
    const owner = await account();
    const server = await receiver();
    const hook = await subscribe(owner, { url: server.url, events: ['execution.completed'] });
    const leased = (id: string, lockedUntil: Date) =>
      suite.t.app.get(DataSource).query(
        `INSERT INTO webhook_deliveries (id, subscription_id, account_id, event, execution_id, data, event_at, status, attempt_count, next_attempt_at, locked_until, attempts, created_at)
         VALUES ($1, $2, $3, 'execution.completed', 'exec_dead', '{"execution_id":"exec_dead","tool_id":"json-transform","status":"success","result":null}', now(), 'pending', 1, now(), $4, '[]', now())`,
        [id, hook.id, owner.id, lockedUntil.toISOString()],
      );
    await leased('msg_lapsed', new Date(Date.now() - 1_000));
    await leased('msg_held', new Date(Date.now() + 60_000));
    const [request] = await received(server, 1);
    expect(request.headers['webhook-id']).toBe('msg_lapsed');
    expect(new Webhook(hook.secret).verify(request.body, standardHeaders(request))).toMatchObject({ data: { execution_id: 'exec_dead' } });
    await settle();
    expect(server.received.map((r) => r.headers['webhook-id'])).toEqual(['msg_lapsed']);
  });

  it("a 410 disables the subscription, with the reason shown, and tells the account's other subscriptions", async () => {
    const owner = await account();
    const server = await receiver((request) => ({ status: request.url === '/notices' ? 200 : 410 }));
    const hook = await subscribe(owner, { url: server.url, events: ['execution.completed'] });
    const notices = await subscribe(owner, { url: `${server.url}/notices`, events: ['webhook.disabled'] });
    await invoke(owner, { expression: '1', data: {} });
    await received(server, 2);
    const notice = server.received.find((request) => request.url === '/notices')!;
    expect(new Webhook(notices.secret).verify(notice.body, standardHeaders(notice))).toEqual({
      event: 'webhook.disabled',
      timestamp: expect.any(String),
      data: { webhook_id: hook.id, url: hook.url, reason: expect.stringMatching(/410 Gone/) },
      signature: expect.stringMatching(/^sha256=/),
    });
    server.received.splice(server.received.indexOf(notice), 1);
    const disabled = await until('the subscription disabled', async () => {
      const res = (await suite.t.request({ method: 'GET', url: `/v1/webhooks/${hook.id}`, key: owner.key })).json();
      return res.enabled ? undefined : res;
    });
    expect(disabled.disabled_reason).toMatch(/410 Gone/);
    await invoke(owner, { expression: '2', data: {} });
    await settle();
    expect(server.received).toHaveLength(1);
    expect((await log(owner, hook.id)).deliveries).toEqual([expect.objectContaining({ status: 'failed' })]);
  });

  it('an endpoint that never answers times out, fails its schedule and is disabled; another endpoint is not delayed', async () => {
    const owner = await account();
    const server = await receiver((request) => (request.url === '/hang' ? null : { status: 200 }));
    const hung = await subscribe(owner, { url: `${server.url}/hang`, events: ['execution.completed'] });
    await subscribe(owner, { url: `${server.url}/fine`, events: ['execution.completed'] });
    await invoke(owner, { expression: '1', data: {} });
    await until('the hung endpoint called', async () => (server.received.some((request) => request.url === '/hang') ? true : undefined));
    const hangStarted = Date.now();
    await until('the healthy endpoint served', async () => (server.received.some((request) => request.url === '/fine') ? true : undefined));
    // Served while the hung attempt still waits for its answer.
    expect(Date.now() - hangStarted).toBeLessThan(2_000);

    const disabled = await until('the hung subscription disabled', async () => {
      const res = (await suite.t.request({ method: 'GET', url: `/v1/webhooks/${hung.id}`, key: owner.key })).json();
      return res.enabled ? undefined : res;
    }, 30_000);
    expect(disabled.disabled_reason).toMatch(/failed all 4 attempts/);
    const [delivery] = (await log(owner, hung.id)).deliveries;
    expect(delivery.status).toBe('failed');
    expect(delivery.attempts).toHaveLength(4);
    for (const attempt of delivery.attempts) expect(attempt).toMatchObject({ status_code: null, error: 'no answer within 2000 ms' });
  });

  it('applies the egress policy at delivery: a URL that passed registration is refused at the address check', async () => {
    const owner = await account();
    const server = await receiver();
    const hook = await subscribe(owner, { url: server.url, events: ['execution.completed'] });
    // As if the policy had narrowed since registration: the stored URL now names a private address.
    await suite.t.app.get(DataSource).query(`UPDATE webhook_subscriptions SET url = 'http://10.0.0.1:9/hook' WHERE id = $1`, [hook.id]);
    await invoke(owner, { expression: '1', data: {} });
    const delivery = await until('a refused attempt', async () => (await log(owner, hook.id)).deliveries.find((d: { attempts: unknown[] }) => d.attempts.length > 0));
    expect(delivery.attempts[0]).toMatchObject({ status_code: null, error: expect.stringMatching(/refused: private \(RFC 1918\) address/) });
    expect(server.received).toHaveLength(0);
  });

  it('a key narrowed to some tools subscribes only to those, and sees only such subscriptions', async () => {
    const owner = await account();
    const narrowed = await suite.t.createKey(owner.id, { name: 'narrow', type: 'service', scopes: ['webhooks:manage'], tool_ids: ['json-transform'] });
    const post = (payload: object) => suite.t.request({ method: 'POST', url: '/v1/webhooks', key: narrowed, payload });
    expect((await post({ url: 'http://127.0.0.1:9/', events: ['execution.completed'] })).statusCode).toBe(403);
    expect((await post({ url: 'http://127.0.0.1:9/', events: ['execution.completed'], tool_ids: ['json-transform', 'test-sleep'] })).statusCode).toBe(403);
    const mine = await post({ url: 'http://127.0.0.1:9/', events: ['execution.completed'], tool_ids: ['json-transform'] });
    expect(mine.statusCode).toBe(201);
    const everything = await subscribe(owner, { url: 'http://127.0.0.1:9/', events: ['execution.completed'] });
    const listed = (await suite.t.request({ method: 'GET', url: '/v1/webhooks', key: narrowed })).json();
    expect(listed.webhooks.map((hook: { id: string }) => hook.id)).toEqual([mine.json().id]);
    expect((await suite.t.request({ method: 'GET', url: `/v1/webhooks/${everything.id}`, key: narrowed })).statusCode).toBe(404);
    const withoutScope = await suite.t.createKey(owner.id, { name: 'no-scope', type: 'service', scopes: ['tools:invoke'] });
    expect((await suite.t.request({ method: 'GET', url: '/v1/webhooks', key: withoutScope })).statusCode).toBe(403);
  });

  it('redelivers a delivered event under the same webhook-id; test sends a ping', async () => {
    const owner = await account();
    const server = await receiver();
    const hook = await subscribe(owner, { url: server.url, events: ['execution.completed'] });
    await invoke(owner, { expression: '1', data: {} });
    const [first] = await received(server, 1);
    const deliveryId = String(first.headers['webhook-id']);
    await until('delivered', async () => ((await log(owner, hook.id, '?status=delivered')).total === 1 ? true : undefined));

    const again = await suite.t.request({ method: 'POST', url: `/v1/webhooks/${hook.id}/deliveries/${deliveryId}/redeliver`, key: owner.key });
    expect(again.statusCode).toBe(202);
    const [, second] = await received(server, 2);
    expect(second.headers['webhook-id']).toBe(deliveryId);
    expect(JSON.parse(second.body).data).toEqual(JSON.parse(first.body).data);
    expect((await suite.t.request({ method: 'POST', url: `/v1/webhooks/${hook.id}/deliveries/msg_unknown/redeliver`, key: owner.key })).statusCode).toBe(404);

    const ping = await suite.t.request({ method: 'POST', url: `/v1/webhooks/${hook.id}/test`, key: owner.key });
    expect(ping.statusCode).toBe(202);
    const [, , third] = await received(server, 3);
    expect(new Webhook(hook.secret).verify(third.body, standardHeaders(third))).toMatchObject({ event: 'ping', data: { webhook_id: hook.id } });
    expect(third.headers['webhook-id']).toBe(ping.json().id);
  });

  it("README's receiver, run as written, verifies a real delivery and refuses a forged one", async () => {
    const readme = readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
    const code = /```js\n(import http from 'node:http';\nimport \{ Webhook \} from 'standardwebhooks';[\s\S]*?)```/.exec(readme)![1];
    const port = await freePort();
    // Inside node_modules/.cache, so its `import 'standardwebhooks'` resolves to this checkout's copy.
    const dir = path.join(__dirname, '..', 'node_modules', '.cache', `readme-receiver-${process.pid}-${mode.name}`);
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'receiver.mjs');
    writeFileSync(file, code.replace('.listen(8080)', `.listen(${port}, '127.0.0.1')`));
    const owner = await account();
    const hook = await subscribe(owner, { url: `http://127.0.0.1:${port}/`, events: ['execution.completed'] });
    const child = spawn(process.execPath, [file], { env: { ...process.env, NODE_OPTIONS: '', TOS_WEBHOOK_SECRET: hook.secret }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk));
    try {
      await until('the receiver to listen', async () => ((await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' }).catch(() => null))?.status === 400 ? true : undefined));
      const executionId = await invoke(owner, { expression: '1 + 1', data: {} });
      await until('the receiver to log the event', async () => (output.includes(`execution.completed ${executionId} success`) ? true : undefined));
      expect(output).toMatch(new RegExp(`^msg_\\w+ execution\\.completed ${executionId} success$`, 'm'));
      const forged = await fetch(`http://127.0.0.1:${port}/`, {
        method: 'POST',
        headers: { 'webhook-id': 'msg_forged', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' },
        body: '{"event":"execution.completed","data":{}}',
      });
      expect(forged.status).toBe(400);
    } finally {
      child.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rotate-secret: both secrets sign during the overlap, in both headers', async () => {
    const owner = await account();
    const server = await receiver();
    const hook = await subscribe(owner, { url: server.url, events: ['execution.completed'] });
    const rotated = await suite.t.request({ method: 'POST', url: `/v1/webhooks/${hook.id}/rotate-secret`, key: owner.key });
    expect(rotated.statusCode).toBe(200);
    const { secret, previous_secret_expires_at } = rotated.json();
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(hook.secret);
    expect(Date.parse(previous_secret_expires_at) - Date.now()).toBeGreaterThan(23 * 3_600_000);

    await invoke(owner, { expression: '1', data: {} });
    const [request] = await received(server, 1);
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(() => new Webhook(secret).verify(request.body, standardHeaders(request))).not.toThrow();
    expect(() => new Webhook(hook.secret).verify(request.body, standardHeaders(request))).not.toThrow();
    const timestamp = String(request.headers['x-timestamp']);
    expect(String(request.headers['x-signature']).split(' ')).toEqual([xSignature(secret, timestamp, request.body), xSignature(hook.secret, timestamp, request.body)]);
    expect(JSON.parse(request.body).signature).toBe(xSignature(secret, timestamp, request.body));
  });
});
