/**
 * `npm run bench:isolation`: what `isolated` buys. p99 of `GET /v1/tools` on an idle service, then
 * while two catastrophic-regex json-transform calls (about 2.5 s of CPU each, one after the other
 * per client) run — with isolation (the default) and without (ISOLATE_TOOLS=false).
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
/** `(a+)+$` on 25 a's and a '!' backtracks for about 2.5 s in V8. */
const SLOW_EXPRESSION = '$match("aaaaaaaaaaaaaaaaaaaaaaaaa!", /(a+)+$/)';

async function measureMode(isolate: boolean): Promise<{ idle: LoadResult; busy: LoadResult; slowCalls: number }> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'tos-bench-isolation-'));
  const env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', ISOLATE_TOOLS: String(isolate) };
  try {
    const key = provisionBenchKey(env);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const auth = { authorization: `Bearer ${key}` };
    const service = await spawnBuiltService({
      name: 'service',
      env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
      isReady: async () => (await fetch(`${base}/v1/tools`, { headers: auth })).ok,
    });
    try {
      const listing = { url: `${base}/v1/tools`, headers: auth };
      const idle = await runLoad(listing, { connections: CONNECTIONS, durationSeconds: DURATION_SECONDS });
      let running = true;
      let slowCalls = 0;
      const slowClient = async () => {
        while (running) {
          await fetch(`${base}/v1/tools/json-transform/invoke?timeout=60`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json', 'cache-control': 'no-cache' },
            body: JSON.stringify({ expression: SLOW_EXPRESSION, data: {} }),
          });
          slowCalls++;
        }
      };
      const clients = [slowClient(), slowClient()];
      const busy = await runLoad(listing, { connections: CONNECTIONS, durationSeconds: DURATION_SECONDS });
      running = false;
      await Promise.all(clients);
      return { idle, busy, slowCalls };
    } finally {
      await service.stop();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  for (const isolate of [true, false]) {
    const { idle, busy, slowCalls } = await measureMode(isolate);
    console.log(
      `${isolate ? 'isolated    ' : 'not isolated'}: GET /v1/tools idle p99 ${idle.p99Ms} ms (${idle.requestsPerSecond}/s); ` +
        `with two slow tool runs p99 ${busy.p99Ms} ms (${busy.requestsPerSecond}/s, ${busy.timeouts} timeouts); ${slowCalls} slow calls finished`,
    );
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
