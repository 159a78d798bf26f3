/**
 * `npm run bench:egress`: what the egress policy costs, and how fast webhook-trigger delivers.
 *
 * 1. The connect-time check in-process: the policy's lookup hook over a stub resolver (no packet),
 *    minus the stub alone, per call; and the address check by itself.
 * 2. webhook-trigger through the service (uncached POST /v1/tools/webhook-trigger/invoke) to a raw
 *    Fastify receiver on loopback, against that receiver taking the same POSTs directly.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Egress, type LookupFunction } from '../src/tools/egress/egress';
import { freePort } from '../test/support/free-port';
import { runLoad } from './load';
import { provisionBenchKey } from './provision';
import { spawnBuiltService, spawnUntilReady } from './spawn-until-ready';

const ROOT = path.join(__dirname, '..');
const DURATION_SECONDS = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = 10;
const LOOKUPS = 200_000;

const stub: LookupFunction = (_host, _options, callback) => callback(null, [{ address: '93.184.216.34', family: 4 }]);

async function perCall(lookup: LookupFunction): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < LOOKUPS; i++) await new Promise<void>((resolve, reject) => lookup('api.example.com', { all: true }, (err) => (err ? reject(err) : resolve())));
  return ((performance.now() - started) * 1000) / LOOKUPS;
}

async function checkCost(): Promise<string> {
  const egress = new Egress({ lookup: stub, allow: '*.corp.example,10.20.0.0/16' });
  await perCall(egress.lookup); // warm-up
  const hooked = await perCall(egress.lookup);
  const bare = await perCall(stub);
  const started = performance.now();
  for (let i = 0; i < LOOKUPS; i++) egress.policy.refusal('api.example.com', i % 2 ? '93.184.216.34' : '2606:2800:220:1:248:1893:25c8:1946');
  const check = ((performance.now() - started) * 1000) / LOOKUPS;
  return `egress check: lookup hook ${(hooked - bare).toFixed(2)} µs over the bare resolver per connection; address check alone ${check.toFixed(2)} µs`;
}

async function webhookThroughput(): Promise<string> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'tos-bench-egress-'));
  const env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', EGRESS_ALLOW: '127.0.0.0/8' };
  const receiverPort = await freePort();
  const receiverUrl = `http://127.0.0.1:${receiverPort}/hook`;
  const receiver = await spawnUntilReady({
    name: 'receiver',
    command: process.execPath,
    args: ['-r', 'ts-node/register/transpile-only', path.join(__dirname, 'baseline-server.ts')],
    cwd: ROOT,
    env: { ...process.env, PORT: String(receiverPort) },
    isReady: async () => (await fetch(`http://127.0.0.1:${receiverPort}/hello`)).ok,
  });
  try {
    const key = provisionBenchKey(env);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const service = await spawnBuiltService({
      name: 'service',
      env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
      isReady: async () => (await fetch(`${base}/healthz`)).ok,
    });
    try {
      const payload = JSON.stringify({ event: 'deploy', service: 'api' });
      const direct = await runLoad({ url: receiverUrl, method: 'POST', headers: { 'content-type': 'application/json' }, body: payload }, { connections: CONNECTIONS, durationSeconds: DURATION_SECONDS });
      const invoke = {
        url: `${base}/v1/tools/webhook-trigger/invoke`,
        method: 'POST' as const,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiverUrl, payload: JSON.parse(payload), secret: 'whsec-bench-secret' }),
      };
      await runLoad(invoke, { connections: CONNECTIONS, durationSeconds: 2 }); // warm-up
      const viaTool = await runLoad(invoke, { connections: CONNECTIONS, durationSeconds: DURATION_SECONDS });
      const failed = viaTool.non2xx + viaTool.errors;
      return (
        `webhook-trigger (signed, through the service): ${viaTool.requestsPerSecond} calls/s, p50 ${viaTool.p50Ms} ms, p99 ${viaTool.p99Ms} ms, ${failed} failed; ` +
        `receiver direct: ${direct.requestsPerSecond}/s, p99 ${direct.p99Ms} ms; ratio ${(viaTool.requestsPerSecond / direct.requestsPerSecond).toFixed(3)}`
      );
    } finally {
      await service.stop();
    }
  } finally {
    await receiver.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(await checkCost());
  console.log(await webhookThroughput());
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
