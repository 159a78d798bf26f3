/**
 * `npm run bench:isolation`: what the bounds on caller-supplied expressions buy.
 *
 * 1. p99 of `GET /v1/tools` on an idle service, then while two runaway json-transform calls (one
 *    after the other per client, each stopped by its 5 s limit) run — with isolation (the default)
 *    and without (ISOLATE_TOOLS=false). json-transform runs on the event loop, a slice at a time,
 *    in both: the two rows measure its slicing (the pool's own timeouts and shares are tested in
 *    test/security.e2e-spec.ts with test tools, which the built service does not load).
 * 2. Fairness: p99 of account B's trivial json-transform call (`$sum`, uncached) on an idle
 *    service, then while account A keeps 2 × TOOL_THREADS runaway expressions running.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { freePort } from '../test/support/free-port';
import { runLoad, type LoadResult } from './load';
import { provisionBenchKey } from './provision';
import { spawnBuiltService } from './spawn-until-ready';

const DURATION_SECONDS = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = 10;
/** Tail recursion for ever: only json-transform's 5 s limit stops it (a catastrophic regex no longer runs long). */
const SLOW_EXPRESSION = '($loop := function($n) { $loop($n + 1) }; $loop(0))';
const TRIVIAL_CALL = JSON.stringify({ expression: '$sum(items.price)', data: { items: [{ price: 1 }, { price: 2 }, { price: 3 }] } });

interface Service {
  base: string;
  /** Keeps `clients` clients of `key` sending the slow expression until stop() (resolves with how many finished). */
  slowCalls(key: string, clients: number): { stop(): Promise<number> };
}

/** Keys of two accounts: the measured one, and the one that sends the slow calls of the fairness run. */
interface Keys {
  bench: string;
  hostile: string;
}

/** An embedded service on a fresh data directory, with the keys provisioned before it starts (PGlite has one user at a time). */
async function withService<T>(settings: Record<string, string>, measure: (service: Service, keys: Keys) => Promise<T>): Promise<T> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'tos-bench-isolation-'));
  const env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...settings };
  try {
    const keys = { bench: provisionBenchKey(env), hostile: provisionBenchKey(env, 'hostile') };
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const server = await spawnBuiltService({
      name: 'service',
      env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
      isReady: async () => (await fetch(`${base}/v1/tools`, { headers: { authorization: `Bearer ${keys.bench}` } })).ok,
    });
    const slowCalls = (slowKey: string, clients: number) => {
      let running = true;
      let finished = 0;
      const client = async () => {
        while (running) {
          await fetch(`${base}/v1/tools/json-transform/invoke?timeout=60`, {
            method: 'POST',
            headers: { authorization: `Bearer ${slowKey}`, 'content-type': 'application/json', 'cache-control': 'no-cache' },
            body: JSON.stringify({ expression: SLOW_EXPRESSION, data: {} }),
          });
          finished++;
        }
      };
      const all = Promise.all(Array.from({ length: clients }, client));
      return {
        stop: async () => {
          running = false;
          await all;
          return finished;
        },
      };
    };
    try {
      return await measure({ base, slowCalls }, keys);
    } finally {
      await server.stop();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function measureMode(isolate: boolean): Promise<{ idle: LoadResult; busy: LoadResult; slowCalls: number }> {
  return withService({ ISOLATE_TOOLS: String(isolate) }, async ({ base, slowCalls }, keys) => {
    const listing = { url: `${base}/v1/tools`, headers: { authorization: `Bearer ${keys.bench}` } };
    const idle = await runLoad(listing, { connections: CONNECTIONS, durationSeconds: DURATION_SECONDS });
    const slow = slowCalls(keys.bench, 2);
    const busy = await runLoad(listing, { connections: CONNECTIONS, durationSeconds: DURATION_SECONDS });
    return { idle, busy, slowCalls: await slow.stop() };
  });
}

async function measureFairness(threads: number): Promise<{ idle: LoadResult; busy: LoadResult; slowCalls: number }> {
  return withService({ TOOL_THREADS: String(threads) }, async ({ base, slowCalls }, keys) => {
    const trivial = {
      url: `${base}/v1/tools/json-transform/invoke`,
      method: 'POST' as const,
      headers: { authorization: `Bearer ${keys.bench}`, 'content-type': 'application/json', 'cache-control': 'no-cache' },
      body: TRIVIAL_CALL,
    };
    const idle = await runLoad(trivial, { connections: 1, durationSeconds: DURATION_SECONDS });
    const hostile = slowCalls(keys.hostile, 2 * threads);
    const busy = await runLoad(trivial, { connections: 1, durationSeconds: DURATION_SECONDS });
    return { idle, busy, slowCalls: await hostile.stop() };
  });
}

/** BENCH_SCENARIOS=fairness (or listing) runs only that part. */
const wanted = (scenario: string) => !process.env.BENCH_SCENARIOS || process.env.BENCH_SCENARIOS.includes(scenario);

async function main(): Promise<void> {
  for (const isolate of wanted('listing') ? [true, false] : []) {
    const { idle, busy, slowCalls } = await measureMode(isolate);
    console.log(
      `${isolate ? 'isolated    ' : 'not isolated'}: GET /v1/tools idle p99 ${idle.p99Ms} ms (${idle.requestsPerSecond}/s); ` +
        `with two slow tool runs p99 ${busy.p99Ms} ms (${busy.requestsPerSecond}/s, ${busy.timeouts} timeouts); ${slowCalls} slow calls finished`,
    );
  }
  if (!wanted('fairness')) return;
  const threads = Number(process.env.TOOL_THREADS ?? 2);
  const { idle, busy, slowCalls } = await measureFairness(threads);
  const statuses = (result: LoadResult) => JSON.stringify(result.statusCodes);
  console.log(
    `fairness (TOOL_THREADS=${threads}): account B's trivial json-transform idle p99 ${idle.p99Ms} ms (p50 ${idle.p50Ms}, ${idle.requestsPerSecond}/s, ${statuses(idle)}); ` +
      `while account A sends ${2 * threads} runaway expressions at a time p99 ${busy.p99Ms} ms (p50 ${busy.p50Ms}, ${busy.requestsPerSecond}/s, ${statuses(busy)}, ${busy.timeouts} timeouts) = ${(busy.p99Ms / idle.p99Ms).toFixed(2)}× idle; ${slowCalls} of A's calls finished`,
  );
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
