/**
 * What the service adds to a call of an OpenAPI operation (docs/upstreams.md#openapi-operations):
 * the service in-process on PGlite, the loopback pets API of the e2e suite (its document generated
 * by @fastify/swagger); the same GET made three ways: directly with fetch, by the built-in
 * `health-check` tool (an execution making one egress-checked request), and as the tool
 * `pets.showPetById` through inject(); rounds of each, alternating the order. Prints per-call
 * microseconds (median of the rounds, their spread) and the paired differences.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { startTestApp } from '../test/support/app';
import { startPetsApi } from '../test/support/openapi-pets';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tos-bench-openapi-'));
  const api = await startPetsApi();
  const t = await startTestApp({ env: { DATA_DIR: dataDir, EGRESS_ALLOW: '127.0.0.1', SECRETS_KEY: randomBytes(32).toString('base64') } });
  try {
    const account = await t.createAccount('bench-openapi');
    const registered = await t.request({
      method: 'POST',
      url: '/v1/upstreams',
      key: account.key,
      payload: { type: 'openapi', name: 'pets', spec_url: `${api.origin}/openapi.json`, base_url: `${api.origin}/api`, operations: ['showPetById'], auth: { none: true } },
    });
    if (registered.statusCode !== 201) throw new Error(`registration: HTTP ${registered.statusCode}: ${registered.body}`);
    const calls = {
      direct: async () => {
        const res = await fetch(`${api.origin}/api/pets/1`, { headers: { accept: 'application/json' } });
        if (res.status !== 200 || ((await res.json()) as { id: number }).id !== 1) throw new Error(`direct: HTTP ${res.status}`);
      },
      'health-check': async () => {
        const res = await t.request({ method: 'POST', url: '/v1/tools/health-check/invoke', key: account.key, headers: { 'cache-control': 'no-cache' }, payload: { target: `${api.origin}/api/pets/1` } });
        if (res.statusCode !== 200) throw new Error(`health-check: HTTP ${res.statusCode}: ${res.body}`);
      },
      openapi: async () => {
        const res = await t.request({ method: 'POST', url: '/v1/tools/pets.showPetById/invoke', key: account.key, payload: { petId: '1' } });
        if (res.statusCode !== 200 || res.json().result.id !== 1) throw new Error(`openapi: HTTP ${res.statusCode}: ${res.body}`);
      },
    };
    const round = async (call: () => Promise<void>) => {
      const started = process.hrtime.bigint();
      for (let i = 0; i < REQUESTS; i++) await call();
      return Number(process.hrtime.bigint() - started) / 1000 / REQUESTS;
    };
    for (const call of Object.values(calls)) await round(call); // warm-up: connections, JIT, the catalogue
    const times: Record<keyof typeof calls, number[]> = { direct: [], 'health-check': [], openapi: [] };
    for (let r = 0; r < ROUNDS; r++) {
      // Alternating which goes first, so drift on a shared machine falls on both.
      const order = r % 2 === 0 ? (['direct', 'health-check', 'openapi'] as const) : (['openapi', 'health-check', 'direct'] as const);
      for (const name of order) times[name].push(await round(calls[name]));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    for (const [name, xs] of Object.entries(times)) {
      console.log(`${name.padEnd(12)} median ${median(xs).toFixed(0)} µs/call, rounds ${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)} (${ROUNDS} rounds × ${REQUESTS})`);
    }
    for (const base of ['direct', 'health-check'] as const) {
      const diffs = times.openapi.map((openapi, i) => openapi - times[base][i]);
      console.log(`openapi − ${base}, paired by round: median ${median(diffs).toFixed(0)} µs, ${Math.min(...diffs).toFixed(0)}–${Math.max(...diffs).toFixed(0)}`);
    }
  } finally {
    await t.close();
    await api.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
