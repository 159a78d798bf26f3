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
import { printPaired, timeRounds } from './rounds';

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
    const times = await timeRounds(calls, ROUNDS, REQUESTS);
    for (const base of ['direct', 'health-check'] as const) printPaired(`openapi − ${base}`, times.openapi, times[base]);
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
