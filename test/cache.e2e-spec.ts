/** docs/API.md#caching: the result cache per API key (memory or Redis), bypass, invalidation, HTTP validators. */
import { useTestApp } from './support/app';
import { describeEachEngine } from './support/engines';
import { TestToolsModule } from './support/test-tools.module';

describeEachEngine('result cache', (mode) => {
  const suite = useTestApp(mode, { extensions: [TestToolsModule] });

  const invoke = (payload: object, key = suite.acme.key, headers: Record<string, string> = {}) =>
    suite.t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke', key, payload, headers });

  it('answers the same input from the cache, per API key, with validators', async () => {
    const first = await invoke({ expression: 'a + b', data: { a: 1, b: 2 } });
    expect(first.json()).toMatchObject({ status: 'success', result: { result: 3 }, cache: { hit: false, ttl: 3600 } });
    const second = await invoke({ data: { b: 2, a: 1 }, expression: 'a + b', ignored: true });
    expect(second.json()).toMatchObject({ status: 'success', execution_id: first.json().execution_id, result: { result: 3 }, cache: { hit: true } });
    expect(second.json().cache.ttl).toBeLessThanOrEqual(3600);
    expect(second.json().timing.execution_ms).toBe(0);
    expect(second.headers.etag).toBe(first.headers.etag);
    expect(second.headers['last-modified']).toBe(first.headers['last-modified']);
    expect(second.headers['cache-control']).toMatch(/^private, max-age=\d+$/);

    const otherKey = await suite.t.createKey(suite.acme.id, { name: 'second', type: 'service' });
    const other = await invoke({ expression: 'a + b', data: { a: 1, b: 2 } }, otherKey);
    expect(other.json().cache.hit).toBe(false);
    expect(other.json().execution_id).not.toBe(first.json().execution_id);
  });

  it('is bypassed by options.cache=false and Cache-Control: no-cache, and never holds failures', async () => {
    const input = { expression: '"bypass"', data: {} };
    const stored = (await invoke(input)).json();
    expect((await invoke({ inputs: input, options: { cache: false } })).json().execution_id).not.toBe(stored.execution_id);
    expect((await invoke(input, suite.acme.key, { 'cache-control': 'no-cache' })).json().cache.hit).toBe(false);
    const failing = { expression: '$$$ (', data: {} };
    const a = await invoke(failing);
    const b = await invoke(failing);
    expect(a.statusCode).toBe(400);
    expect(b.json().execution_id).not.toBe(a.json().execution_id);
    const uncacheable = await suite.t.request({ method: 'POST', url: '/v1/tools/test-sleep/invoke', key: suite.acme.key, payload: { ms: 0 } });
    expect(uncacheable.json()).not.toHaveProperty('cache');
  });

  it("DELETE /v1/tools/{id}/cache drops the caller's entries only", async () => {
    const input = { expression: '"drop-me"', data: {} };
    const otherKey = await suite.t.createKey(suite.acme.id, { name: 'third', type: 'service' });
    await invoke(input);
    await invoke(input, otherKey);
    const dropped = await suite.t.request({ method: 'DELETE', url: '/v1/tools/json-transform/cache', key: suite.acme.key });
    expect(dropped.statusCode).toBe(200);
    expect(dropped.json().dropped).toBeGreaterThanOrEqual(1);
    expect((await invoke(input)).json().cache.hit).toBe(false);
    expect((await invoke(input, otherKey)).json().cache.hit).toBe(true);
    expect((await suite.t.request({ method: 'DELETE', url: '/v1/tools/no-such/cache', key: suite.acme.key })).statusCode).toBe(404);
  });

  it('GET answers carry ETag and Cache-Control; a matching If-None-Match gets 304', async () => {
    const first = await suite.t.request({ method: 'GET', url: '/v1/tools/json-transform', key: suite.acme.key });
    expect(first.headers.etag).toMatch(/^".+"$/);
    expect(first.headers['cache-control']).toBe('private, no-cache');
    expect(Date.parse(first.headers['last-modified'] as string)).toBeLessThanOrEqual(Date.now());
    const again = await suite.t.request({ method: 'GET', url: '/v1/tools/json-transform', key: suite.acme.key, headers: { 'if-none-match': first.headers.etag as string } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const changed = await suite.t.request({ method: 'GET', url: '/v1/tools/json-transform', key: suite.acme.key, headers: { 'if-none-match': '"stale"' } });
    expect(changed.statusCode).toBe(200);
  });
});
