/**
 * `npm run bench:async`: async throughput of the distributed engine. One API process and N worker
 * processes (compiled build) on a throwaway PostgreSQL and Redis; autocannon submits `?async=true`
 * invokes for the run's duration (accept latency p50/p99), then the runner waits until every
 * accepted execution has finished and reports accepted → success per second.
 *
 * `BENCH_WORKERS` (default `1,2,4`) lists the worker counts; `BENCH_ROUNDS` (default 3) repeats
 * the whole list, alternating counts, and the table shows each count's median and min–max. Every
 * measured run has its own fresh database and its own Redis. `BENCH_COMPARE` names another compiled
 * tree (a copy of an earlier dist/ inside this checkout): each run is then paired with the same run
 * of that build, alternating, and each build gets its table. `BENCH_CPU_PROF` names a directory
 * where every service process writes its CPU profile (`--cpu-prof`) when it stops.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../test/support/free-port';
import { startPostgres, type PostgresServer } from '../test/support/postgres-server';
import { startRedis } from '../test/support/redis-server';
import { runLoad } from './load';
import { provisionBenchKey } from './provision';
import { spawnBuiltService, type ReadyProcess } from './spawn-until-ready';

const ROOT = path.join(__dirname, '..');
const DURATION_SECONDS = Number(process.env.BENCH_DURATION ?? 10);
const WORKER_COUNTS = (process.env.BENCH_WORKERS ?? '1,2,4').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BUILDS = [...(process.env.BENCH_COMPARE ? [process.env.BENCH_COMPARE] : []), 'dist'];
const CONNECTIONS = 50;
const DRAIN_TIMEOUT_MS = 300_000;

interface RunResult {
  build: string;
  workers: number;
  accepted: number;
  accept_rate_per_s: number;
  accept_p50_ms: number;
  accept_p99_ms: number;
  non_202: number;
  end_to_end_per_s: number;
  drain_seconds: number;
  /** CPU time of the API process, and of all worker processes together, per successful execution. */
  api_cpu_us_per_execution: number;
  workers_cpu_us_per_execution: number;
  success: number;
  error: number;
  cancelled: number;
}

/** One measured run: a fresh database and Redis, one API and `workers` worker processes. */
async function measure(postgres: PostgresServer, build: string, workers: number, run: number): Promise<RunResult> {
  const cleanups: Array<() => Promise<void>> = [];
  try {
    const database = `tos_bench_${run}`;
    const admin = new Client({ connectionString: postgres.url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`).finally(() => admin.end());
    const redis = await startRedis();
    cleanups.push(() => redis.stop());

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      DATABASE_URL: postgres.url.replace(/\/postgres$/, `/${database}`),
      REDIS_URL: redis.url,
      SHUTDOWN_GRACE_SECONDS: '1',
    };
    const auth = { authorization: `Bearer ${provisionBenchKey(env)}` };
    const start = async (name: string, role: 'api' | 'worker', isReady: () => Promise<boolean>): Promise<ReadyProcess> => {
      const p = await spawnBuiltService({ name, role, env, isReady, build, cpuProfileDir: process.env.BENCH_CPU_PROF });
      cleanups.push(() => p.stop());
      return p;
    };
    const api = await start('api', 'api', async () => (await fetch(`${base}/v1/tools`, { headers: auth })).ok);
    // A worker has no HTTP port to probe: it is up once its heartbeat is in Redis (every process with
    // a shared queue beats, the API too), so start-up is neither in the CPU time nor in the drain.
    const heartbeats = new Redis(redis.url);
    cleanups.push(async () => void heartbeats.disconnect());
    const allBeating = async () => (await heartbeats.zcard('tos:executions:workers')) >= 1 + workers;
    const workerProcesses = await Promise.all(Array.from({ length: workers }, (_, i) => start(`worker ${i + 1}`, 'worker', allBeating)));

    const count = async (status: string) => {
      const res = await fetch(`${base}/v1/executions?status=${status}&limit=1`, { headers: auth });
      return ((await res.json()) as { total: number }).total;
    };
    const body = JSON.stringify({ inputs: { expression: '$sum(items.price)', data: { items: [{ price: 1 }, { price: 2 }] } } });
    const request = { url: `${base}/v1/tools/json-transform/invoke?async=true`, method: 'POST' as const, headers: { ...auth, 'content-type': 'application/json' }, body };

    const cpu = () => [api.cpuMs() / 1000, workerProcesses.reduce((sum, w) => sum + w.cpuMs() / 1000, 0)];
    const cpuBefore = cpu();
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
    const [apiCpu, workersCpu] = cpu().map((seconds, i) => seconds - cpuBefore[i]);
    const [success, error, cancelled] = [await count('success'), await count('error'), await count('cancelled')];
    // Requests still in flight when autocannon stops are accepted but not counted by it: success may exceed `accepted`.
    if (success < accepted || error > 0 || cancelled > 0) {
      console.error(`!!! not every accepted execution succeeded (worker output:\n${workerProcesses.map((w) => w.outputTail()).join('\n---\n')})`);
      process.exitCode = 1;
    }
    return {
      build,
      workers,
      accepted,
      accept_rate_per_s: Math.round(accepted / acceptSeconds),
      accept_p50_ms: load.p50Ms,
      accept_p99_ms: load.p99Ms,
      non_202: load.total - accepted,
      end_to_end_per_s: Math.round(success / totalSeconds),
      drain_seconds: Math.round((totalSeconds - acceptSeconds) * 10) / 10,
      api_cpu_us_per_execution: Math.round((apiCpu * 1e6) / success),
      workers_cpu_us_per_execution: Math.round((workersCpu * 1e6) / success),
      success,
      error,
      cancelled,
    };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err) => console.error('cleanup failed:', err));
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return Math.round((sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2) * 10) / 10;
};

/** Median and min–max of one column over a worker count's runs. */
const spread = (values: number[]) => (values.length > 1 ? `${median(values)} (${Math.min(...values)}–${Math.max(...values)})` : String(values[0]));

function printTable(build: string, results: RunResult[]): void {
  console.log(`\n${build}: ${ROUNDS} round(s) of ${DURATION_SECONDS} s per worker count; median (min–max)\n`);
  console.log('| workers | end to end /s | accepts /s | accept p50 ms | accept p99 ms | drain s | API CPU µs/execution | workers CPU µs/execution |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const workers of WORKER_COUNTS) {
    const runs = results.filter((r) => r.workers === workers);
    const column = (key: Exclude<keyof RunResult, 'build'>) => spread(runs.map((r) => r[key]));
    console.log(`| ${workers} | ${column('end_to_end_per_s')} | ${column('accept_rate_per_s')} | ${column('accept_p50_ms')} | ${column('accept_p99_ms')} | ${column('drain_seconds')} | ${column('api_cpu_us_per_execution')} | ${column('workers_cpu_us_per_execution')} |`);
  }
}

async function main(): Promise<void> {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const postgres = await startPostgres();
  try {
    const results: RunResult[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const workers of WORKER_COUNTS) {
        for (const build of BUILDS) {
          const result = await measure(postgres, build, workers, results.length);
          console.log(JSON.stringify(result));
          results.push(result);
        }
      }
    }
    for (const build of BUILDS) printTable(build, results.filter((r) => r.build === build));
  } finally {
    await postgres.stop().catch((err) => console.error('cleanup failed:', err));
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
