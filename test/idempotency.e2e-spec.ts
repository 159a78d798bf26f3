/** docs/API.md#idempotent-retries: X-Idempotency-Key, claimed atomically in the database, replayed for 24 h. */
import { useTestApp } from './support/app';
import { describeEachEngine } from './support/engines';
import { TestToolsModule } from './support/test-tools.module';

describeEachEngine('idempotency', (mode) => {
  const suite = useTestApp(mode, { extensions: [TestToolsModule] });

  const invoke = (toolId: string, payload: object, idempotencyKey: string, query = '', key = suite.acme.key) =>
    suite.t.request({ method: 'POST', url: `/v1/tools/${toolId}/invoke${query}`, key, payload, headers: { 'x-idempotency-key': idempotencyKey } });
  const executionsOf = async (toolId: string) =>
    (await suite.t.request({ method: 'GET', url: `/v1/executions?tool_id=${toolId}&limit=1`, key: suite.acme.key })).json().total as number;

  it('replays the first answer to a retry with the same request', async () => {
    const first = await invoke('test-misbehave', { mode: 'ok' }, 'retry-1');
    expect(first.statusCode).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const before = await executionsOf('test-misbehave');
    const retry = await invoke('test-misbehave', { mode: 'ok' }, 'retry-1');
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json()).toEqual(first.json());
    expect(await executionsOf('test-misbehave')).toBe(before);
    // Failures are answers too: replayed with their status.
    const failed = await invoke('test-misbehave', { mode: 'tool-error' }, 'retry-2');
    const failedAgain = await invoke('test-misbehave', { mode: 'tool-error' }, 'retry-2');
    expect(failedAgain.statusCode).toBe(500);
    expect(failedAgain.json()).toEqual(failed.json());
  });

  it('refuses the same key with a different request, and scopes keys to API key and tool', async () => {
    await invoke('test-misbehave', { mode: 'ok' }, 'scoped');
    const different = await invoke('test-misbehave', { mode: 'ok', token: 'x' }, 'scoped');
    expect(different.statusCode).toBe(400);
    expect(different.json().error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'X-Idempotency-Key' } });
    expect((await invoke('json-transform', { expression: '1', data: {} }, 'scoped')).headers['idempotent-replayed']).toBeUndefined();
    const otherKey = await suite.t.createKey(suite.acme.id, { name: 'other', type: 'service' });
    expect((await invoke('test-misbehave', { mode: 'ok', token: 'x' }, 'scoped', '', otherKey)).statusCode).toBe(200);
    expect((await invoke('test-misbehave', { mode: 'ok' }, 'x'.repeat(256))).statusCode).toBe(400);
  });

  it('stores nothing for a request that fails validation', async () => {
    expect((await invoke('json-transform', { data: {} }, 'invalid-first')).statusCode).toBe(400);
    const valid = await invoke('json-transform', { expression: '2', data: {} }, 'invalid-first');
    expect(valid.statusCode).toBe(200);
    expect(valid.headers['idempotent-replayed']).toBeUndefined();
  });

  it('async replays return the same execution_id and Location', async () => {
    const first = await invoke('test-sleep', { ms: 0 }, 'async-1', '?async=true');
    expect(first.statusCode).toBe(202);
    const retry = await invoke('test-sleep', { ms: 0 }, 'async-1', '?async=true');
    expect(retry.statusCode).toBe(202);
    expect(retry.json().execution_id).toBe(first.json().execution_id);
    expect(retry.headers.location).toBe(first.headers.location);
  });

  it('50 concurrent identical requests make exactly one execution and consistent answers', async () => {
    const before = await executionsOf('test-sleep');
    const answers = await Promise.all(Array.from({ length: 50 }, () => invoke('test-sleep', { ms: 300 }, 'burst')));
    expect(await executionsOf('test-sleep')).toBe(before + 1);
    const successes = answers.filter((a) => a.statusCode === 200);
    const inFlight = answers.filter((a) => a.statusCode === 409);
    expect(successes.length + inFlight.length).toBe(50);
    expect(successes.length).toBeGreaterThanOrEqual(1);
    expect(new Set(successes.map((a) => a.json().execution_id)).size).toBe(1);
    for (const a of inFlight) expect(a.json().error).toMatchObject({ code: 'CONFLICT', retryable: true });
    const later = await invoke('test-sleep', { ms: 300 }, 'burst');
    expect(later.headers['idempotent-replayed']).toBe('true');
    expect(later.json().execution_id).toBe(successes[0].json().execution_id);
  });
});
