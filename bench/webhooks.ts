/**
 * `npm run bench:webhooks`: webhook delivery, end to end, from the end of an execution to its
 * receipt by a loopback receiver (127.0.0.1, in this process). For each configuration — embedded
 * (one process) and distributed (PostgreSQL + Redis, one API and one worker process) — three phases,
 * each with its own BENCH_SUBSCRIPTIONS (4) subscriptions to `execution.completed`, fed by
 * uncached sync invokes of json-transform (each ends one execution, so one delivery per subscription):
 *
 * 1. saturated: invokes as fast as 50 connections get answers for BENCH_DURATION s: deliveries per
 *    second while the service also runs the executions;
 * 2. paced: BENCH_RATE (50) invokes per second: the latency a healthy receiver sees (p50/p99 of
 *    receipt time minus the event's `timestamp`, the execution's end);
 * 3. recovery: the receiver answers 503 for the first 10 s while BENCH_RATE invokes per second run
 *    for 10 s, then 200: how long after it recovers every event is in, and that nothing is lost or
 *    delivered twice. The retry schedule is BENCH_RETRY_SCHEDULE (`2,4,8,16,32` s: the default's
 *    5 min second step would make this phase last minutes), so the drain follows its steps;
 * 4. fan-out: 20 subscriptions (an account's maximum) fed at 100 executions/s for 5 s: a backlog
 *    of ~10,000 deliveries, and the rate it drains at once the executions stop — delivery alone.
 *
 * BENCH_CONFIGURATIONS and BENCH_PHASES (comma-separated names) run only those.
 * Every phase checks that each subscription received every execution's event exactly once (by
 * `webhook-id` among 2xx answers) and exits 1 otherwise. See bench/README.md.
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Redis from 'ioredis';
import { freePort } from '../test/support/free-port';
import { listenHttp } from '../test/support/http-listen';
import { runLoad } from './load';
import { provisionBenchKey } from './provision';
import { embeddedDataDir, postgresDatabase, redis, type Resource } from './resources';
import { spawnBuiltService, type ReadyProcess } from './spawn-until-ready';

const ROOT = path.join(__dirname, '..');
const DURATION_SECONDS = Number(process.env.BENCH_DURATION ?? 10);
const RATE = Number(process.env.BENCH_RATE ?? 50);
const SUBSCRIPTIONS = Number(process.env.BENCH_SUBSCRIPTIONS ?? 4);
const RETRY_SCHEDULE = process.env.BENCH_RETRY_SCHEDULE ?? '2,4,8,16,32';
const OUTAGE_MS = 10_000;
/** The fan-out phase: the account's maximum of subscriptions, fed for 5 s at this rate, measured draining after. */
const FAN_OUT_SUBSCRIPTIONS = 20;
const FAN_OUT_RATE = 100;
const DRAIN_TIMEOUT_MS = 180_000;
const ONLY = process.env.BENCH_CONFIGURATIONS?.split(',').map((name) => name.trim());
const PHASES = process.env.BENCH_PHASES?.split(',').map((name) => name.trim());

interface Configuration {
  name: string;
  resources: Resource[];
  /** A worker process beside the API one. */
  worker: boolean;
}

const CONFIGURATIONS: Configuration[] = [
  { name: 'embedded', resources: [embeddedDataDir], worker: false },
  { name: 'postgres+redis', resources: [postgresDatabase, redis], worker: true },
];

/** One webhook request as the receiver saw it. */
interface Receipt {
  id: string;
  path: string;
  receivedAt: number;
  eventAt: number;
  answered: number;
}

/** Records every request and answers 200, or 503 while `failing` says so. */
class Receiver {
  readonly receipts: Receipt[] = [];
  failUntil = 0;
  url = '';
  close: () => Promise<void> = async () => undefined;

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const receivedAt = Date.now();
        const status = receivedAt < this.failUntil ? 503 : 200;
        const event = JSON.parse(Buffer.concat(chunks).toString()) as { timestamp: string };
        this.receipts.push({ id: String(req.headers['webhook-id']), path: req.url ?? '/', receivedAt, eventAt: Date.parse(event.timestamp), answered: status });
        res.writeHead(status).end();
      });
    });
    ({ url: this.url, close: this.close } = await listenHttp(server));
  }
}

interface PhaseResult {
  configuration: string;
  phase: string;
  executions: number;
  deliveries: number;
  deliveries_per_s: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  /** Recovery only: from the receiver's first 2xx to the last event in. */
  drain_s?: number;
  failed_attempts: number;
  duplicates: number;
  lost: number;
}

const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]);

async function measureConfiguration(configuration: Configuration, phaseResults: PhaseResult[]): Promise<void> {
  const cleanups: Array<() => Promise<void>> = [];
  const controller = new AbortController();
  try {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      SECRETS_KEY: randomBytes(32).toString('base64'),
      EGRESS_ALLOW: '127.0.0.1',
      WEBHOOK_RETRY_SCHEDULE: RETRY_SCHEDULE,
      SHUTDOWN_GRACE_SECONDS: '1',
    };
    for (const resource of configuration.resources) {
      const made = await resource(controller.signal);
      cleanups.push(made.cleanup);
      Object.assign(env, made.env);
    }
    const port = await freePort();
    env.PORT = String(port);
    const base = `http://127.0.0.1:${port}`;
    const auth = { authorization: `Bearer ${provisionBenchKey(env)}` };
    const start = async (name: string, role: 'api' | 'worker' | undefined, isReady: () => Promise<boolean>): Promise<ReadyProcess> => {
      const p = await spawnBuiltService({ name, role, env, isReady, cpuProfileDir: process.env.BENCH_CPU_PROF });
      cleanups.push(() => p.stop());
      return p;
    };
    await start('service', configuration.worker ? 'api' : undefined, async () => (await fetch(`${base}/v1/tools`, { headers: auth })).ok);
    if (configuration.worker) {
      const heartbeats = new Redis(env.REDIS_URL!);
      cleanups.push(async () => void heartbeats.disconnect());
      await start('worker', 'worker', async () => (await heartbeats.zcard('tos:executions:workers')) >= 2);
    }

    const receiver = new Receiver();
    await receiver.start();
    cleanups.push(() => receiver.close());

    const api = async (method: string, url: string, body?: unknown) => {
      const res = await fetch(`${base}${url}`, { method, headers: { ...auth, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
      return res.status === 204 ? undefined : ((await res.json()) as Record<string, any>);
    };
    const successes = async () => (await api('GET', '/v1/executions?tool_id=json-transform&status=success&limit=1'))!.total as number;
    const invoke = {
      url: `${base}/v1/tools/json-transform/invoke`,
      method: 'POST' as const,
      headers: { ...auth, 'content-type': 'application/json', 'cache-control': 'no-cache' },
      body: JSON.stringify({ inputs: { expression: '$sum(items)', data: { items: [1, 2, 3] } }, options: { cache: false } }),
    };

    const phase = async (name: string, load: () => Promise<unknown>, { outage = false, subscriptions = SUBSCRIPTIONS } = {}): Promise<void> => {
      if (PHASES && !PHASES.includes(name)) return;
      const hooks: string[] = [];
      for (let i = 0; i < subscriptions; i++) {
        hooks.push((await api('POST', '/v1/webhooks', { url: `${receiver.url}/${name}/${i}`, events: ['execution.completed'] }))!.id as string);
      }
      receiver.receipts.length = 0;
      const before = await successes();
      if (outage) receiver.failUntil = Date.now() + OUTAGE_MS;
      await load();
      const loadEnded = Date.now();
      let executions = (await successes()) - before;
      let expected = executions * subscriptions;
      const delivered = () => receiver.receipts.filter((r) => r.answered === 200);
      const t0 = Date.now();
      while (new Set(delivered().map((r) => `${r.path} ${r.id}`)).size < expected) {
        if (Date.now() - t0 > DRAIN_TIMEOUT_MS) break;
        await sleep(100);
      }
      await sleep(1_000); // anything sent twice arrives in this second
      // Counted again: calls still in flight when the load stopped may have ended since.
      executions = (await successes()) - before;
      expected = executions * subscriptions;
      const ok = delivered();
      const distinct = new Set(ok.map((r) => `${r.path} ${r.id}`)).size;
      const fanOut = subscriptions > SUBSCRIPTIONS;
      const latencies = ok.map((r) => r.receivedAt - r.eventAt).sort((a, b) => a - b);
      // Fan-out measures the drain once the executions stop: delivery alone.
      const first = fanOut ? loadEnded : Math.min(...ok.map((r) => r.receivedAt));
      const last = Math.max(...ok.map((r) => r.receivedAt));
      const result: PhaseResult = {
        configuration: configuration.name,
        phase: name,
        executions,
        deliveries: distinct,
        deliveries_per_s: Math.round((fanOut ? ok.filter((r) => r.receivedAt >= loadEnded).length : distinct) / Math.max((last - first) / 1000, 0.001)),
        p50_ms: percentile(latencies, 50),
        p99_ms: percentile(latencies, 99),
        max_ms: latencies[latencies.length - 1],
        ...(outage && { drain_s: Math.round((last - Math.min(...ok.filter((r) => r.receivedAt >= receiver.failUntil).map((r) => r.receivedAt))) / 100) / 10 }),
        failed_attempts: receiver.receipts.length - ok.length,
        duplicates: ok.length - distinct,
        lost: expected - distinct,
      };
      phaseResults.push(result);
      console.log(JSON.stringify(result));
      if (result.lost !== 0 || result.duplicates !== 0) process.exitCode = 1;
      for (const id of hooks) await api('DELETE', `/v1/webhooks/${id}`);
    };

    await phase('saturated', () => runLoad(invoke, { connections: 50, durationSeconds: DURATION_SECONDS }));
    await phase('paced', () => runLoad(invoke, { connections: 10, durationSeconds: DURATION_SECONDS, overallRate: RATE }));
    await phase('recovery', () => runLoad(invoke, { connections: 10, durationSeconds: OUTAGE_MS / 1000, overallRate: RATE }), { outage: true });
    await phase('fan-out', () => runLoad(invoke, { connections: 10, durationSeconds: 5, overallRate: FAN_OUT_RATE }), { subscriptions: FAN_OUT_SUBSCRIPTIONS });
  } finally {
    controller.abort();
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err) => console.error('cleanup failed:', err));
  }
}

async function main(): Promise<void> {
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const results: PhaseResult[] = [];
  for (const configuration of CONFIGURATIONS.filter((c) => !ONLY || ONLY.includes(c.name))) await measureConfiguration(configuration, results);
  console.log(`\n${SUBSCRIPTIONS} subscriptions per phase; paced at ${RATE} executions/s; retry schedule ${RETRY_SCHEDULE} s\n`);
  console.log('| configuration | phase | executions | deliveries | deliveries/s | p50 ms | p99 ms | max ms | drain s | failed attempts | duplicates | lost |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    console.log(`| ${r.configuration} | ${r.phase} | ${r.executions} | ${r.deliveries} | ${r.deliveries_per_s} | ${r.p50_ms} | ${r.p99_ms} | ${r.max_ms} | ${r.drain_s ?? ''} | ${r.failed_attempts} | ${r.duplicates} | ${r.lost} |`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
