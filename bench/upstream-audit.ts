/**
 * What the audit log's `upstream.called` event (docs/upstreams.md#audit-log) adds to a call of an
 * upstream tool: the service in-process on PGlite with metrics on, the reference server
 * (`@modelcontextprotocol/server-everything`) over Streamable HTTP on 127.0.0.1, `everything.get-sum`
 * called through inject() with the event written (`audited`) and with UpstreamAudit.recordCall
 * replaced by a no-op (`unaudited`). Rounds of each, alternating the order; prints per-call
 * microseconds (median of the rounds, their spread) and the paired difference; then the event's
 * write alone, in rounds.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { UpstreamAudit } from '../src/upstreams/upstream-audit';
import { startTestApp } from '../test/support/app';
import { startEverything } from '../test/support/everything-server';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100);

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tos-bench-upstream-audit-'));
  const everything = await startEverything();
  const t = await startTestApp({ env: { DATA_DIR: dataDir, EGRESS_ALLOW: '127.0.0.1', SECRETS_KEY: randomBytes(32).toString('base64'), METRICS_TOKEN: 'bench-metrics-token-0123' } });
  try {
    const account = await t.createAccount('bench-upstream-audit');
    const registered = await t.request({ method: 'POST', url: '/v1/upstreams', key: account.key, payload: { name: 'everything', transport: 'streamable-http', url: everything.url, auth: { none: true } } });
    if (registered.statusCode !== 201) throw new Error(`registration: HTTP ${registered.statusCode}: ${registered.body}`);
    const audit = t.app.get(UpstreamAudit);
    const recordCall = audit.recordCall.bind(audit);
    const call = async () => {
      const res = await t.request({ method: 'POST', url: '/v1/tools/everything.get-sum/invoke', key: account.key, payload: { a: 2, b: 40 } });
      if (res.statusCode !== 200 || !res.body.includes('42')) throw new Error(`call: HTTP ${res.statusCode}: ${res.body}`);
    };
    const ways = {
      audited: () => (audit.recordCall = recordCall),
      unaudited: () => (audit.recordCall = async () => undefined),
    };
    type Way = keyof typeof ways;
    const names = Object.keys(ways) as Way[];
    const round = async (way: Way) => {
      ways[way]();
      const started = process.hrtime.bigint();
      for (let i = 0; i < REQUESTS; i++) await call();
      return Number(process.hrtime.bigint() - started) / 1000 / REQUESTS;
    };
    for (const name of names) await round(name); // warm-up: the session, JIT, the catalogue
    const times = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<Way, number[]>;
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of r % 2 === 0 ? names : [...names].reverse()) times[name].push(await round(name));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    for (const name of names) {
      const xs = times[name];
      console.log(`${name.padEnd(10)} median ${median(xs).toFixed(0)} µs/call, rounds ${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)} (${ROUNDS} rounds × ${REQUESTS})`);
    }
    const diffs = times.audited.map((x, i) => x - times.unaudited[i]);
    console.log(`audited − unaudited, paired by round: median ${median(diffs).toFixed(0)} µs, ${Math.min(...diffs).toFixed(0)}–${Math.max(...diffs).toFixed(0)}`);
    // The event's write alone, outside the call's noise: what `audited` adds, and nothing else.
    audit.recordCall = recordCall;
    const upstream = { id: registered.json().id, name: 'everything', account_id: account.id, shared: false } as Parameters<typeof recordCall>[0];
    const writes: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < REQUESTS; i++) await recordCall(upstream, 'everything.get-sum', `exec_bench${r}_${i}`, 'ok');
      writes.push(Number(process.hrtime.bigint() - started) / 1000 / REQUESTS);
    }
    console.log(`event write alone median ${median(writes).toFixed(0)} µs, rounds ${Math.min(...writes).toFixed(0)}–${Math.max(...writes).toFixed(0)}`);
  } finally {
    await t.close();
    everything.child.kill();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
