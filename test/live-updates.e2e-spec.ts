/**
 * GET /v1/ws (docs/executions.md#live-updates-over-websocket): authentication, subscriptions by
 * execution, tool and account, visibility, resume, idle close and bad messages — on both engines
 * (distributed: events through Redis pub/sub).
 */
import { createServer, type IncomingMessage } from 'node:http';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { useTestApp } from './support/app';
import { describeEachEngine } from './support/engines';
import { listenHttp } from './support/http-listen';
import { connectLive, LiveClient, LiveMessage } from './support/live-client';
import { until } from './support/poll';
import { Webhook } from 'standardwebhooks';
import { newWebhookSecret } from '../src/webhooks/webhook-signing';
import { TestToolsModule } from './support/test-tools.module';
import { ConformanceFixturesModule } from './conformance/conformance-fixtures.module';

const isEvent = (name: string, executionId: string) => (m: LiveMessage) => m.type === 'event' && m.event === name && m.data?.execution_id === executionId;

describeEachEngine('live updates over WebSocket', (mode) => {
  const suite = useTestApp(mode, { env: { WORKER_CONCURRENCY: '2', WS_IDLE_TIMEOUT_SECONDS: '2' }, extensions: [TestToolsModule, ConformanceFixturesModule] });
  let baseUrl: string;
  const open: LiveClient[] = [];
  const connect = async (options?: Parameters<typeof connectLive>[1]) => {
    const client = await connectLive(baseUrl, options);
    open.push(client);
    return client;
  };

  beforeAll(async () => {
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = (await suite.t.app.getUrl()).replace('localhost', '127.0.0.1').replace('[::1]', '127.0.0.1');
  });
  afterEach(() => {
    for (const client of open.splice(0)) client.close();
  });

  const submit = async (toolId: string, inputs: object, key = suite.acme.key) => {
    const res = await suite.t.request({ method: 'POST', url: `/v1/tools/${toolId}/invoke?async=true`, key, payload: { inputs } });
    expect(res.statusCode).toBe(202);
    return res.json().execution_id as string;
  };
  const subscribe = async (client: LiveClient, message: object) => {
    const from = client.messages.length;
    client.send({ type: 'subscribe', ...message });
    return client.next('subscribed', (m) => m.type === 'subscribed' || m.type === 'error', 10_000, from);
  };

  it('authenticates by header: ready, then an execution subscribed by id streams progress and completion with rising seq', async () => {
    const client = await connect({ key: suite.acme.key });
    const ready = await client.next('ready', (m) => m.type === 'ready');
    expect(ready).toMatchObject({ account_id: suite.acme.id, seq: expect.any(Number) });
    const id = await submit('test-sleep', { ms: 600 });
    expect(await subscribe(client, { execution_id: id })).toEqual({ type: 'subscribed', subscription: `execution:${id}` });
    const done = await client.next('completion', isEvent('execution.completed', id));
    expect(done).toMatchObject({ subscription: `execution:${id}`, data: { execution_id: id, tool_id: 'test-sleep', status: 'success', result: { slept_ms: 600 } } });
    const events = client.messages.filter((m) => m.type === 'event');
    expect(events.some((m) => m.event === 'execution.progress' && m.data!.progress > 0 && m.data!.progress < 100)).toBe(true);
    const seqs = events.map((m) => m.seq!);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    // One completion, however many processes report the end.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(client.messages.filter(isEvent('execution.completed', id))).toHaveLength(1);
  });

  it('sends the questions of an execution that asks (input_required), then its cancellation', async () => {
    const client = await connect({ key: suite.acme.key });
    const id = await submit('conformance-test-input-required-result-multi-round', {});
    await subscribe(client, { execution_id: id });
    const asked = await client.next('the question', isEvent('execution.input_required', id));
    expect(asked.data).toMatchObject({ status: 'input_required', input_requests: { step1: expect.objectContaining({ method: 'elicitation/create' }) } });
    expect((await suite.t.request({ method: 'DELETE', url: `/v1/executions/${id}`, key: suite.acme.key })).statusCode).toBe(200);
    expect(await client.next('the cancellation', isEvent('execution.cancelled', id))).toMatchObject({ data: { status: 'cancelled' } });
  });

  it('authenticates a browser by its first message; a bad key in it closes 4401, in the header refuses the upgrade with 401', async () => {
    const browser = await connect();
    browser.send({ type: 'subscribe', all: true });
    expect(await browser.next('error', (m) => m.type === 'error')).toMatchObject({ code: 'UNAUTHORIZED' });
    browser.send({ type: 'auth', key: suite.acme.key });
    expect(await browser.next('ready', (m) => m.type === 'ready')).toMatchObject({ account_id: suite.acme.id });

    const wrong = await connect();
    wrong.send({ type: 'auth', key: 'sk_svc_' + 'x'.repeat(32) });
    expect(await wrong.closed).toMatchObject({ code: 4401 });
    // A wrong key counts against the client IP's window, as over REST.
    const remaining = async () => Number((await suite.t.request({ method: 'GET', url: '/v1/tools' })).headers['x-ratelimit-remaining']);
    const before = await remaining();
    expect(before).toBeGreaterThan(2);
    await expect(connectLive(baseUrl, { key: 'sk_svc_' + 'y'.repeat(32) })).rejects.toMatchObject({ status: 401 });
    expect(await remaining()).toBe(before - 2);
    const plain = await suite.t.request({ method: 'GET', url: '/v1/ws', key: suite.acme.key });
    expect(plain.statusCode).toBe(426);
  });

  it('a key without executions:read is closed 4403', async () => {
    const key = await suite.t.createKey(suite.acme.id, { name: 'no-read', type: 'service', scopes: ['tools:read'] });
    const client = await connect({ key });
    expect(await client.closed).toMatchObject({ code: 4403 });
  });

  it('by tool and by account: only the visible executions; a narrowed key sees only its tools, another account nothing', async () => {
    const narrowKey = await suite.t.createKey(suite.acme.id, { name: 'narrow', type: 'service', tool_ids: ['test-sleep'] });
    const other = await suite.t.createAccount(`other-${mode.name}`);
    const all = await connect({ key: suite.acme.key });
    const byTool = await connect({ key: suite.acme.key });
    const narrow = await connect({ key: narrowKey });
    const stranger = await connect({ key: other.key });
    expect(await subscribe(all, { all: true })).toMatchObject({ type: 'subscribed', subscription: 'all' });
    expect(await subscribe(byTool, { tool_id: 'test-sleep' })).toMatchObject({ type: 'subscribed', subscription: 'tool:test-sleep' });
    expect(await subscribe(narrow, { all: true })).toMatchObject({ type: 'subscribed' });
    expect(await subscribe(narrow, { tool_id: 'json-transform' })).toMatchObject({ type: 'error', code: 'FORBIDDEN' });
    expect(await subscribe(stranger, { all: true })).toMatchObject({ type: 'subscribed' });

    const sleep = await submit('test-sleep', { ms: 100 });
    const transform = await submit('json-transform', { expression: '$sum(n)', data: { n: [1, 2] } });
    await all.next('sleep done', isEvent('execution.completed', sleep));
    await all.next('transform done', isEvent('execution.completed', transform));
    await byTool.next('sleep done by tool', isEvent('execution.completed', sleep));
    await narrow.next('sleep done narrowed', isEvent('execution.completed', sleep));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(byTool.messages.some((m) => m.data?.execution_id === transform)).toBe(false);
    expect(narrow.messages.some((m) => m.data?.execution_id === transform)).toBe(false);
    expect(stranger.messages.filter((m) => m.type === 'event')).toEqual([]);
    // Another account's execution by id: as if it did not exist.
    expect(await subscribe(stranger, { execution_id: sleep })).toMatchObject({ type: 'error', code: 'NOT_FOUND' });
  });

  it('a client that reconnects with ?after= gets the state it missed, and nothing older', async () => {
    const first = await connect({ key: suite.acme.key });
    const ready = await first.next('ready', (m) => m.type === 'ready');
    first.close();
    const missed = await submit('test-sleep', { ms: 50 });
    await until('the missed execution to end', async () => {
      const e = (await suite.t.request({ method: 'GET', url: `/v1/executions/${missed}`, key: suite.acme.key })).json();
      return e.status === 'success' ? e : undefined;
    });
    const resumed = await connect({ key: suite.acme.key, query: `?after=${ready.seq}` });
    await subscribe(resumed, { tool_id: 'test-sleep' });
    const replay = await resumed.next('the missed completion', isEvent('execution.completed', missed));
    expect(replay.seq!).toBeGreaterThan(ready.seq!);

    // From a point after that end (and past the resume slack), nothing is replayed.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const later = await connect({ key: suite.acme.key });
    const laterReady = await later.next('ready', (m) => m.type === 'ready');
    await subscribe(later, { tool_id: 'test-sleep', after: laterReady.seq });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(later.messages.some((m) => m.data?.execution_id === missed)).toBe(false);
  });

  it('pings; a client that answers nothing is closed 4408 after the idle timeout, one that pongs stays', async () => {
    const silent = await connect({ key: suite.acme.key, autoPong: false });
    const lively = await connect({ key: suite.acme.key });
    let pings = 0;
    lively.ws.on('ping', () => pings++);
    expect(await silent.closed).toMatchObject({ code: 4408 });
    expect(pings).toBeGreaterThan(0);
    expect(lively.ws.readyState).toBe(lively.ws.OPEN);
  });

  it('answers bad messages with an error and keeps serving', async () => {
    const client = await connect({ key: suite.acme.key });
    for (const bad of ['not json', '[]', JSON.stringify({ type: 'subscribe' }), JSON.stringify({ type: 'subscribe', all: true, tool_id: 'x' }), JSON.stringify({ type: 'nope' }), JSON.stringify({ type: 'unsubscribe', all: true })]) {
      const from = client.messages.length;
      client.send(bad);
      expect(await client.next(`error for ${bad}`, (m) => m.type === 'error', 5_000, from)).toMatchObject({ code: expect.stringMatching(/^(INVALID_MESSAGE|NOT_FOUND)$/) });
    }
    const from = client.messages.length;
    client.send({ type: 'ping' });
    await client.next('pong', (m) => m.type === 'pong', 5_000, from);
    // A message over the size limit closes with 1009.
    client.send({ type: 'ping', pad: 'x'.repeat(20_000) });
    expect(await client.closed).toMatchObject({ code: 1009 });
  });

  it('tos listen --forward-to posts each event to a loopback receiver, signed as deliveries are (checked by the official library)', async () => {
    const secret = newWebhookSecret();
    const received: Array<{ headers: IncomingMessage['headers']; text: string; body: any }> = [];
    const receiver = await listenHttp(
      createServer((req, res) => {
        let text = '';
        req.on('data', (chunk) => (text += chunk));
        req.on('end', () => {
          received.push({ headers: req.headers, text, body: JSON.parse(text) });
          res.end('ok');
        });
      }),
    );
    const cli = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', path.join(__dirname, '../src/cli/main.ts'), 'listen', '--forward-to', `${receiver.url}/hooks`, '--events', 'execution.completed'], {
      env: { ...process.env, TOS_URL: baseUrl, TOS_API_KEY: suite.acme.key, TOS_LISTEN_SECRET: secret },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    cli.stderr.on('data', (chunk) => (output += chunk));
    cli.stdout.on('data', (chunk) => (output += chunk));
    try {
      await until('tos listen to be ready', async () => (output.includes('Ready') ? true : undefined), 30_000);
      const id = await submit('test-sleep', { ms: 50 });
      const post = await until('the forwarded completion', async () => received.find((r) => r.body.data?.execution_id === id), 20_000);
      expect(post.headers['x-tos-event']).toBe('execution.completed');
      expect(post.headers['content-type']).toMatch(/^application\/json/);
      expect(post.body).toMatchObject({ event: 'execution.completed', timestamp: expect.any(String), data: { execution_id: id, tool_id: 'test-sleep', status: 'success', result: { slept_ms: 50 } } });
      expect(output).toContain(`Your webhook signing secret is ${secret}\n`);
      expect(post.headers).toMatchObject({ 'webhook-id': expect.stringMatching(/^msg_[0-9a-f]{32}$/), 'x-signature': post.body.signature, 'x-timestamp': post.headers['webhook-timestamp'] });
      expect(new Webhook(secret).verify(post.text, post.headers as Record<string, string>)).toEqual(post.body);
      expect(() => new Webhook(newWebhookSecret()).verify(post.text, post.headers as Record<string, string>)).toThrow();
      expect(received.every((r) => r.body.event === 'execution.completed')).toBe(true);
    } finally {
      cli.kill('SIGTERM');
      await receiver.close();
    }
  });
});
