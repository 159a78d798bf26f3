/**
 * `npm run bench:async`: async throughput of the distributed engine. One API process and one
 * worker process (compiled build) on a throwaway PostgreSQL and Redis; autocannon submits
 * `?async=true` invokes for the run's duration (accept latency p50/p99), then the runner waits
 * until every accepted execution has finished and reports accepted → success per second.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { Client } from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../test/support/free-port';
import { startPostgres } from '../test/support/postgres-server';
import { startRedis } from '../test/support/redis-server';
import { runLoad } from './load';
import { provisionBenchKey } from './provision';
import { spawnBuiltService, type ReadyProcess } from './spawn-until-ready';

const ROOT = path.join(__dirname, '..');
const DURATION_SECONDS = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = 50;
const DRAIN_TIMEOUT_MS = 300_000;

async function main(): Promise<void> {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const cleanups: Array<() => Promise<void>> = [];
  try {
    const postgres = await startPostgres();
    cleanups.push(() => postgres.stop());
    const admin = new Client({ connectionString: postgres.url });
    await admin.connect();
    await admin.query('CREATE DATABASE tos_bench').finally(() => admin.end());
    const redis = await startRedis();
    cleanups.push(() => redis.stop());

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      DATABASE_URL: postgres.url.replace(/\/postgres$/, '/tos_bench'),
      REDIS_URL: redis.url,
      SHUTDOWN_GRACE_SECONDS: '1',
    };
    const auth = { authorization: `Bearer ${provisionBenchKey(env)}` };
    const start = async (role: 'api' | 'worker', isReady: () => Promise<boolean>): Promise<ReadyProcess> => {
      const p = await spawnBuiltService({ name: role, role, env, isReady });
      cleanups.push(() => p.stop());
      return p;
    };
    await start('api', async () => (await fetch(`${base}/v1/tools`, { headers: auth })).ok);
    // A worker has no HTTP port to probe; jobs wait in Redis until it takes them, which the drain time includes.
    const worker = await start('worker', async () => true);

    const count = async (status: string) => {
      const res = await fetch(`${base}/v1/executions?status=${status}&limit=1`, { headers: auth });
      return ((await res.json()) as { total: number }).total;
    };
    const body = JSON.stringify({ inputs: { expression: '$sum(items.price)', data: { items: [{ price: 1 }, { price: 2 }] } } });
    const request = { url: `${base}/v1/tools/json-transform/invoke?async=true`, method: 'POST' as const, headers: { ...auth, 'content-type': 'application/json' }, body };

    const t0 = performance.now();
    const load = await runLoad(request, { connections: CONNECTIONS, durationSeconds: DURATION_SECONDS });
    const acceptSeconds = (performance.now() - t0) / 1000;
    const accepted = load.statusCodes['202'] ?? 0;
    let active = Infinity;
    while (active > 0) {
      if (performance.now() - t0 > DRAIN_TIMEOUT_MS) throw new Error(`executions still active after ${DRAIN_TIMEOUT_MS} ms`);
      active = (await count('queued')) + (await count('running'));
      if (active > 0) await sleep(100);
    }
    const totalSeconds = (performance.now() - t0) / 1000;
    const [success, error, cancelled] = [await count('success'), await count('error'), await count('cancelled')];
    const result = {
      accepted,
      accept_rate_per_s: Math.round(accepted / acceptSeconds),
      accept_p50_ms: load.p50Ms,
      accept_p99_ms: load.p99Ms,
      non_202: load.total - accepted,
      end_to_end_per_s: Math.round(success / totalSeconds),
      drain_seconds: Math.round((totalSeconds - acceptSeconds) * 10) / 10,
      success,
      error,
      cancelled,
    };
    console.log(JSON.stringify(result, null, 2));
    // Requests still in flight when autocannon stops are accepted but not counted by it: success may exceed `accepted`.
    if (success < accepted || error > 0 || cancelled > 0) {
      console.error(`!!! not every accepted execution succeeded (worker output:\n${worker.outputTail()})`);
      process.exitCode = 1;
    }
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err) => console.error('cleanup failed:', err));
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
