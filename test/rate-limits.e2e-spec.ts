/**
 * docs/API.md#rate-limits-and-quotas through the real app: the key window, the per-tool window, the monthly quota, the
 * per-IP window for requests without a valid key, headers on every response — in memory
 * (embedded) and in Redis shared by two API processes (distributed).
 */
import Redis from 'ioredis';
import { AccountsService } from '../src/keys/accounts.service';
import type { Tier } from '../src/identity/tiers';
import { startTestApp, TestApp } from './support/app';
import { describeEachEngine } from './support/engines';
import { killProcess, ServiceProcess, startServiceProcess } from './support/processes';
import { freePort } from './support/free-port';
import { until } from './support/poll';
import { TestToolsModule } from './support/test-tools.module';

describeEachEngine('rate limits', (mode) => {
  let t: TestApp;
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const prepared = await mode.prepare();
    cleanup = prepared.cleanup;
    env = { ...prepared.env, IP_RATE_LIMIT: '4' };
    t = await startTestApp({ env, extensions: [TestToolsModule] });
  });

  afterAll(async () => {
    await t?.close();
    await cleanup?.();
  });

  /** An enterprise account with its own numbers, and a key of it. */
  const account = async (name: string, numbers: { requests_per_minute?: number; monthly_calls?: number }, tier: Tier = 'enterprise') => {
    const created = await t.app.get(AccountsService).create({ name, tier, ...numbers });
    return t.createKey(created.id, { name: 'k', type: 'service' });
  };

  it('counts every request of a key in its rolling minute; the one over the limit gets 429 with matching retry headers', async () => {
    const key = await account('five-rpm', { requests_per_minute: 5 });
    // The first request opens the window: a slot frees a minute after it was counted, somewhere
    // between the moment it was sent and the moment it was answered (a loaded machine stretches that).
    const firstSent = Date.now();
    let firstAnswered = 0;
    for (let i = 0; i < 5; i++) {
      const res = await t.request({ method: 'GET', url: i % 2 ? '/v1/tools' : '/v1/executions', key });
      firstAnswered ||= Date.now();
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('5');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(4 - i));
      expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(Math.floor(firstSent / 1000) + 60);
      expect(Number(res.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(Math.ceil(firstAnswered / 1000) + 60);
    }
    const limited = await t.request({ method: 'GET', url: '/v1/tools', key });
    expect(limited.statusCode).toBe(429);
    const body = limited.json();
    expect(body.error).toMatchObject({ code: 'RATE_LIMITED', retryable: true, details: { scope: 'API key', limit: 5 } });
    expect(body.error.retry_after).toBeGreaterThan(0);
    expect(limited.headers['retry-after']).toBe(String(body.error.retry_after));
    expect(limited.headers['x-ratelimit-retry-after']).toBe(String(body.error.retry_after));
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    // Errors count too, and carry the headers.
    const notFound = await t.request({ method: 'GET', url: '/v1/tools/nope', key: await account('other', { requests_per_minute: 5 }) });
    expect(notFound.statusCode).toBe(404);
    expect(notFound.headers['x-ratelimit-remaining']).toBe('4');
  });

  it("applies the tool's own rate_limit per key and tool, on invocations only (enterprise accounts exempt)", async () => {
    const key = await account('tool-window', {}, 'pro');
    for (let i = 0; i < 3; i++) expect((await t.request({ method: 'POST', url: '/v1/tools/test-limited/invoke', key, payload: {} })).statusCode).toBe(200);
    const limited = await t.request({ method: 'POST', url: '/v1/tools/test-limited/invoke', key, payload: {} });
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.details).toMatchObject({ scope: 'tool test-limited', limit: 3 });
    expect((await t.request({ method: 'GET', url: '/v1/tools/test-limited', key })).statusCode).toBe(200);
    expect((await t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke', key, payload: { expression: '1', data: {} } })).statusCode).toBe(200);
    const otherKey = await account('tool-window-2', {}, 'pro');
    expect((await t.request({ method: 'POST', url: '/v1/tools/test-limited/invoke', key: otherKey, payload: {} })).statusCode).toBe(200);
    const enterprise = await account('tool-window-3', {});
    for (let i = 0; i < 5; i++) expect((await t.request({ method: 'POST', url: '/v1/tools/test-limited/invoke', key: enterprise, payload: {} })).statusCode).toBe(200);
  });

  it('enforces the monthly call quota on invocations, counting the month so far', async () => {
    const key = await account('quota-3', { monthly_calls: 3 });
    for (let i = 0; i < 3; i++) expect((await t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke', key, payload: { expression: '1', data: {} } })).statusCode).toBe(200);
    const over = await t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke', key, payload: { expression: '1', data: {} } });
    expect(over.statusCode).toBe(429);
    expect(over.json().error.details).toMatchObject({ scope: 'monthly call quota', limit: 3, per: 'month' });
    expect((await t.request({ method: 'GET', url: '/v1/tools', key })).statusCode).toBe(200); // reads are not calls
  });

  describe('one admission gate for both doors', () => {
    const rest = (key: string, tool: string, payload: object, headers: Record<string, string> = {}) =>
      t.request({ method: 'POST', url: `/v1/tools/${tool}/invoke`, key, payload, headers });
    /** A stateless MCP tools/call, as an agent sends it. */
    const mcp = async (key: string, name: string, args: object) => {
      const res = await t.request({
        method: 'POST',
        url: '/v1/mcp',
        key,
        headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
      });
      const body = res.body.startsWith('event:') || res.body.startsWith('data:') ? JSON.parse(res.body.split('\n').find((line) => line.startsWith('data:'))!.slice(5)) : res.json();
      const result = body.result as { isError?: boolean; content: { text: string }[] };
      return result.isError ? { error: JSON.parse(result.content[0].text).error } : { ok: true };
    };

    it('counts calls from REST and MCP in one tool window, and refuses the next one at either door', async () => {
      const key = await account('both-doors-window', {}, 'pro');
      expect((await rest(key, 'test-limited', {})).statusCode).toBe(200);
      expect(await mcp(key, 'test-limited', {})).toEqual({ ok: true });
      expect((await rest(key, 'test-limited', {})).statusCode).toBe(200);
      expect(await mcp(key, 'test-limited', {})).toMatchObject({ error: { code: 'RATE_LIMITED', details: { scope: 'tool test-limited', limit: 3 } } });
      expect((await rest(key, 'test-limited', {})).json().error).toMatchObject({ code: 'RATE_LIMITED', details: { scope: 'tool test-limited' } });
    });

    it('spends the monthly quota once per call at either door: a cache hit is a call, a replay and bad input are not', async () => {
      const key = await account('both-doors-quota', { monthly_calls: 4 });
      const idempotent = { 'x-idempotency-key': 'deploy-1' };
      expect((await rest(key, 'json-transform', { expression: '1', data: {} }, idempotent)).statusCode).toBe(200); // 1
      for (let i = 0; i < 3; i++) {
        const replay = await rest(key, 'json-transform', { expression: '1', data: {} }, idempotent);
        expect(replay.headers['idempotent-replayed']).toBe('true');
      }
      expect((await rest(key, 'json-transform', { expression: 42, data: {} })).statusCode).toBe(400); // invalid: not a call
      expect(await mcp(key, 'json-transform', { data: {} })).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
      expect(await mcp(key, 'json-transform', { expression: '1', data: {} })).toEqual({ ok: true }); // 2: a cache hit
      expect((await rest(key, 'json-transform', { expression: '2', data: {} })).statusCode).toBe(200); // 3
      expect(await mcp(key, 'json-transform', { expression: '3', data: {} })).toEqual({ ok: true }); // 4
      expect(await mcp(key, 'json-transform', { expression: '4', data: {} })).toMatchObject({ error: { code: 'RATE_LIMITED', details: { scope: 'monthly call quota' } } });
      expect((await rest(key, 'json-transform', { expression: '1', data: {} })).json().error).toMatchObject({ code: 'RATE_LIMITED', details: { scope: 'monthly call quota' } });
      // The stored answer is still replayed once the quota is spent: it costs nothing.
      expect((await rest(key, 'json-transform', { expression: '1', data: {} }, idempotent)).statusCode).toBe(200);
    });
  });

  it('counts each message of an MCP batch in the key window: those the window cannot hold get a RATE_LIMITED error and do not run', async () => {
    const created = await t.app.get(AccountsService).create({ name: 'batch-window', tier: 'enterprise', requests_per_minute: 10 });
    const [key, reader] = [await t.createKey(created.id, { name: 'k', type: 'service' }), await t.createKey(created.id, { name: 'reader', type: 'service' })];
    expect((await t.request({ method: 'GET', url: '/v1/tools', key })).statusCode).toBe(200); // 1 of 10
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'json-transform', arguments: { expression: String(id), data: {} } } });
    // 12 messages: the POST pays for the first, the window holds 8 more; a notification counts like a request.
    const batch = [call(1), { jsonrpc: '2.0', method: 'notifications/initialized' }, ...Array.from({ length: 10 }, (_, i) => call(i + 2))];
    const res = await t.request({
      method: 'POST',
      url: '/v1/mcp',
      key,
      headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      payload: batch,
    });
    expect(res.statusCode).toBe(200);
    const answers = new Map((res.json() as { id: number; result?: { isError?: boolean }; error?: { code: number; data: { code: string; retry_after: number } } }[]).map((a) => [a.id, a]));
    expect(answers.size).toBe(11);
    const ran = [...answers.values()].filter((a) => a.result && !a.result.isError).map((a) => a.id);
    expect(ran.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const id of [9, 10, 11]) expect(answers.get(id)!.error).toMatchObject({ code: -32029, data: { code: 'RATE_LIMITED', retry_after: expect.any(Number) } });
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    expect((await t.request({ method: 'GET', url: '/v1/tools', key })).statusCode).toBe(429);
    const executions = (await t.request({ method: 'GET', url: '/v1/executions?tool_id=json-transform&limit=100', key: reader })).json();
    expect(executions.total).toBe(8); // the refused calls never ran
  });

  it('limits requests without a valid key per client IP, and shows that window where no key was counted', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await t.request({ method: 'GET', url: '/v1/tools', headers: { authorization: `Bearer sk_svc_${'x'.repeat(32)}` }, remoteAddress: '203.0.113.7' });
      statuses.push(res.statusCode);
      expect(res.headers['x-ratelimit-limit']).toBe('4');
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
    const unknownRoute = await t.request({ method: 'GET', url: '/nowhere', remoteAddress: '203.0.113.7' });
    expect(unknownRoute.statusCode).toBe(404);
    expect(unknownRoute.headers['x-ratelimit-remaining']).toBe('0');
    const health = await t.request({ method: 'GET', url: '/healthz', remoteAddress: '198.51.100.1' });
    expect(health.headers['x-ratelimit-remaining']).toBe('4');
  });

  if (mode.name === 'distributed') {
    let second: ServiceProcess | undefined;
    afterAll(() => killProcess(second));

    let port: number;
    const secondProcess = async () => {
      if (!second) {
        port = await freePort();
        second = await startServiceProcess('api', { ...env, PORT: String(port), HOST: '127.0.0.1' });
      }
    };

    it('a key revoked through one API process is refused by the others at once, despite their caches', async () => {
      await secondProcess();
      const created = (await t.request({ method: 'POST', url: '/v1/keys', key: await account('revoker', {}), payload: { name: 'r', type: 'service' } })).json();
      const viaSecond = () => fetch(`http://127.0.0.1:${port}/v1/tools`, { headers: { authorization: `Bearer ${created.key}` } });
      expect((await viaSecond()).status).toBe(200); // now cached there for AUTH_CACHE_TTL_SECONDS (30)
      expect((await t.request({ method: 'DELETE', url: `/v1/keys/${created.id}`, key: created.key })).statusCode).toBe(200);
      await until('the other process to refuse the revoked key', async () => ((await viaSecond()).status === 401 ? true : undefined), 1_000);
    });

    it('two API processes sharing Redis let exactly `limit` requests through together', async () => {
      const key = await account('shared-7', { requests_per_minute: 7 });
      await secondProcess();
      const statuses: number[] = [];
      for (let i = 0; i < 14; i++) {
        if (i % 2 === 0) statuses.push((await t.request({ method: 'GET', url: '/v1/tools', key })).statusCode);
        else statuses.push((await fetch(`http://127.0.0.1:${port}/v1/tools`, { headers: { authorization: `Bearer ${key}` } })).status);
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(7);
      expect(statuses.slice(7).every((s) => s === 429)).toBe(true);
    });

    it("two API processes share one monthly quota, which starts again from the month's executions when its counter is lost", async () => {
      const key = await account('shared-quota', { monthly_calls: 4 });
      await secondProcess();
      let calls = 0;
      const invoke = async (viaSecond: boolean) => {
        const payload = { expression: String(++calls), data: {} }; // distinct, so none is a cache hit without an execution
        if (!viaSecond) return (await t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke', key, payload })).statusCode;
        const url = `http://127.0.0.1:${port}/v1/tools/json-transform/invoke`;
        return (await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(payload) })).status;
      };
      expect([await invoke(false), await invoke(true)]).toEqual([200, 200]);

      const redis = new Redis(env.REDIS_URL);
      try {
        const counters = await redis.keys('*:quota:*');
        expect(counters.length).toBeGreaterThan(0);
        await redis.del(...counters); // as a Redis restart without persistence would
      } finally {
        redis.disconnect();
      }
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push(await invoke(i % 2 === 1));
      expect(statuses).toEqual([200, 200, 429, 429]);
    });
  }
});
