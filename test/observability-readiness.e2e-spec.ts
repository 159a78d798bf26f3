/** /readyz: besides its checks, it names the backend each part runs on in this configuration. */
import { HealthPort } from '../src/health/health-port';
import { useTestApp } from './support/app';
import { until } from './support/poll';
import { describeEachEngine, ENGINE_MODES } from './support/engines';
import { freePort } from './support/free-port';
import { killProcess, startServiceProcess } from './support/processes';
import { RedisServer, startRedis } from './support/redis-server';

describeEachEngine('readiness backends', (mode) => {
  const suite = useTestApp(mode, { env: { METRICS_PORT: '0', HEALTH_PORT: '0' } });

  it('reports each backend the configuration uses', async () => {
    const ready = await suite.t.request({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    const distributed = mode.name === 'distributed';
    expect(ready.json()).toEqual({
      status: 'ready',
      checks: { database: 'ok', queue: 'ok', ...(distributed && { redis: 'ok' }) },
      backends: {
        database: distributed ? 'postgresql' : 'pglite',
        queue: distributed ? 'bull' : 'in-process',
        result_cache: distributed ? 'redis' : 'memory',
        rate_limits: distributed ? 'redis' : 'memory',
        execution_events: distributed ? 'redis' : 'memory',
        metrics: 'port',
        tracing: 'off',
      },
    });
  });
});

describeEachEngine('probes on HEALTH_PORT', (mode) => {
  const suite = useTestApp(mode, { env: { HEALTH_PORT: '0' } });
  const probe = (route: string, method = 'GET') => fetch(`http://127.0.0.1:${suite.t.app.get(HealthPort).port}${route}`, { method });

  it('answers /healthz and /readyz as the main port does, and nothing else', async () => {
    const live = await probe('/healthz');
    expect([live.status, await live.json()]).toEqual([200, { status: 'ok' }]);
    const ready = await probe('/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual((await suite.t.request({ method: 'GET', url: '/readyz' })).json());
    expect((await probe('/v1/tools')).status).toBe(404);
    expect((await probe('/healthz', 'POST')).status).toBe(404);
  });
});

describe('a worker process', () => {
  it('answers /healthz and /readyz on HEALTH_PORT, its only HTTP', async () => {
    const database = await ENGINE_MODES.find((m) => m.name === 'distributed')!.prepare();
    const port = await freePort();
    const worker = await startServiceProcess('worker', { ...database.env, HEALTH_PORT: String(port) });
    try {
      expect(await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()).toEqual({ status: 'ok' });
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ready', checks: { database: 'ok', queue: 'ok', redis: 'ok' }, backends: { queue: 'bull' } });
    } finally {
      await killProcess(worker);
      await database.cleanup();
    }
  }, 90_000);
});

describe('readiness with Redis away', () => {
  let redis: RedisServer;
  /** A Redis of its own, so killing it disturbs no other suite. */
  const suite = useTestApp({
    prepare: async () => {
      redis = await startRedis();
      const database = await ENGINE_MODES.find((m) => m.name === 'distributed')!.prepare();
      return {
        env: { ...database.env, REDIS_URL: redis.url, HEALTH_PORT: '0' },
        cleanup: async () => {
          await database.cleanup();
          await redis.stop();
        },
      };
    },
  });

  it('answers 503 naming redis when the Redis the cache and limits use is down', async () => {
    await redis.kill();
    const notReady = await suite.t.request({ method: 'GET', url: '/readyz' });
    expect(notReady.statusCode).toBe(503);
    expect(notReady.json().checks).toMatchObject({ database: 'ok', redis: expect.stringMatching(/^failing/) });
    const probe = await fetch(`http://127.0.0.1:${suite.t.app.get(HealthPort).port}/readyz`);
    expect(probe.status).toBe(503);
    expect(((await probe.json()) as { checks: object }).checks).toMatchObject({ redis: expect.stringMatching(/^failing/) });
    await redis.restart(); // the app's own Redis clients then close cleanly
    await until('readiness to return', async () => ((await suite.t.request({ method: 'GET', url: '/readyz' })).statusCode === 200 ? true : undefined), 20_000, 200);
  });
});
