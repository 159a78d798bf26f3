/** /readyz (issue 18): besides its checks, it names the backend each part runs on in this configuration. */
import { useTestApp } from './support/app';
import { until } from './support/poll';
import { describeEachEngine, ENGINE_MODES } from './support/engines';
import { RedisServer, startRedis } from './support/redis-server';

describeEachEngine('readiness backends', (mode) => {
  const suite = useTestApp(mode, { env: { METRICS_PORT: '0' } });

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

describe('readiness with Redis away', () => {
  let redis: RedisServer;
  /** A Redis of its own, so killing it disturbs no other suite. */
  const suite = useTestApp({
    prepare: async () => {
      redis = await startRedis();
      const database = await ENGINE_MODES.find((m) => m.name === 'distributed')!.prepare();
      return {
        env: { ...database.env, REDIS_URL: redis.url },
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
    await redis.restart(); // the app's own Redis clients then close cleanly
    await until('readiness to return', async () => ((await suite.t.request({ method: 'GET', url: '/readyz' })).statusCode === 200 ? true : undefined), 20_000, 200);
  });
});
