/**
 * `npm run bench:workflows`: what a workflow run costs over the calls it makes, on the embedded
 * service (compiled build). Paired and alternating, BENCH_ROUNDS rounds of:
 *   - a 10-step linear workflow of json-transform, run sync (POST /v1/workflows/{id}/runs): wall time;
 *   - the same 10 calls as sequential sync invokes (uncached), each waiting for the one before;
 *   - the same 10 calls as sequential async invokes, each polled (every 2 ms) to its end;
 * then the throughput of a 3-step workflow (two parallel steps and one after): BENCH_RUNS sync
 * runs, BENCH_IN_FLIGHT at a time (the service waits for each run's end, so no polling loads it).
 * Reports medians and spreads.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../test/support/free-port';
import { provisionBenchKey } from './provision';
import { spawnBuiltService } from './spawn-until-ready';

const ROOT = path.join(__dirname, '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const PER_ROUND = Number(process.env.BENCH_PER_ROUND ?? 10);
const RUNS = Number(process.env.BENCH_RUNS ?? 300);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 16);
const POLL_MS = 2;

const step = (n: number) => ({ id: `s${n}`, tool: 'json-transform', ...(n > 1 && { needs: [`s${n - 1}`] }), inputs: { expression: '$ + 1', data: n === 1 ? 0 : `\${{ steps.s${n - 1}.result.result }}` } });
const LINEAR = { name: 'bench-linear', steps: Array.from({ length: 10 }, (_, i) => step(i + 1)), outputs: { value: '${{ steps.s10.result.result }}' } };
const FAN_IN = {
  name: 'bench-fan-in',
  steps: [
    { id: 'a', tool: 'json-transform', inputs: { expression: '$ + 1', data: 1 } },
    { id: 'b', tool: 'json-transform', inputs: { expression: '$ + 2', data: 1 } },
    { id: 'c', tool: 'json-transform', needs: ['a', 'b'], inputs: { expression: '$sum($)', data: ['${{ steps.a.result.result }}', '${{ steps.b.result.result }}'] } },
  ],
  outputs: { value: '${{ steps.c.result.result }}' },
};

async function main(): Promise<void> {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tos-bench-wf-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', DATA_DIR: dataDir, SHUTDOWN_GRACE_SECONDS: '1' };
  const auth = { authorization: `Bearer ${provisionBenchKey(env)}` };
  const service = await spawnBuiltService({ name: 'service', env, isReady: async () => (await fetch(`${base}/v1/tools`, { headers: auth })).ok });
  const call = async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${route}`, { method, headers: { ...auth, 'content-type': 'application/json', ...headers }, ...(body !== undefined && { body: JSON.stringify(body) }) });
    const json = (await res.json()) as Record<string, any>;
    if (res.status >= 300 && res.status !== 202) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const ended = async (id: string) => {
    for (;;) {
      const { status } = await call('GET', `/v1/executions/${id}`);
      if (status === 'success') return;
      if (status !== 'queued' && status !== 'running') throw new Error(`${id} ended ${status}`);
      await sleep(POLL_MS);
    }
  };
  try {
    const linear = (await call('POST', '/v1/workflows', LINEAR)).id as string;
    const fanIn = (await call('POST', '/v1/workflows', FAN_IN)).id as string;
    const invoke = (data: number, async: boolean) => call('POST', `/v1/tools/json-transform/invoke${async ? '?async=true' : ''}`, { inputs: { expression: '$ + 1', data }, options: { cache: false } }, { 'cache-control': 'no-cache' });

    const scenarios: Record<string, () => Promise<void>> = {
      'workflow (10 steps)': async () => {
        const run = await call('POST', `/v1/workflows/${linear}/runs?timeout=60`, { inputs: {} });
        if (run.result?.value !== 10) throw new Error(`run: ${JSON.stringify(run)}`);
      },
      '10 sync invokes': async () => {
        let value = 0;
        for (let i = 0; i < 10; i++) value = (await invoke(value, false)).result.result as number;
      },
      '10 async invokes (polled)': async () => {
        for (let i = 0; i < 10; i++) await ended((await invoke(i, true)).execution_id as string);
      },
    };
    for (const scenario of Object.values(scenarios)) await scenario(); // warm-up
    const perRound: Record<string, number[]> = Object.fromEntries(Object.keys(scenarios).map((name) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, scenario] of Object.entries(scenarios)) {
        const times: number[] = [];
        for (let i = 0; i < PER_ROUND; i++) {
          const started = performance.now();
          await scenario();
          times.push(performance.now() - started);
        }
        perRound[name].push(median(times));
      }
    }
    const workflowMs = perRound['workflow (10 steps)'];
    const ratio = (name: string) => workflowMs.map((ms, i) => ms / perRound[name][i]);
    const report: Record<string, unknown> = {
      rounds: ROUNDS,
      per_round: PER_ROUND,
      ...Object.fromEntries(Object.entries(perRound).map(([name, ms]) => [`${name} ms`, summary(ms)])),
      'workflow ÷ 10 sync invokes': summary(ratio('10 sync invokes')),
      'workflow ÷ 10 async invokes': summary(ratio('10 async invokes (polled)')),
    };

    await call('POST', `/v1/workflows/${fanIn}/runs?timeout=60`, { inputs: {} }); // warm-up
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next++ < RUNS) {
          const run = await call('POST', `/v1/workflows/${fanIn}/runs?timeout=60`, { inputs: {} });
          if (run.result?.value !== 5) throw new Error(`run: ${JSON.stringify(run)}`);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    report['3-step runs/s'] = { runs: RUNS, in_flight: IN_FLIGHT, seconds: round(seconds), runs_per_second: round(RUNS / seconds) };
    console.log(JSON.stringify(report, null, 2));
  } finally {
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const round = (n: number) => Math.round(n * 100) / 100;

/** Median, and the spread as min..max across rounds. */
function summary(values: number[]): { median: number; min: number; max: number } {
  return { median: round(median(values)), min: round(Math.min(...values)), max: round(Math.max(...values)) };
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
