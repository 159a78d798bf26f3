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
import { printPaired, timeRounds } from './rounds';

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
    // Each variant sets the audit's write before each of its calls.
    const times = await timeRounds(
      {
        audited: async () => {
          audit.recordCall = recordCall;
          await call();
        },
        unaudited: async () => {
          audit.recordCall = async () => undefined;
          await call();
        },
      },
      ROUNDS,
      REQUESTS,
    );
    printPaired('audited − unaudited', times.audited, times.unaudited);
    // The event's write alone, outside the call's noise.
    audit.recordCall = recordCall;
    const upstream = { id: registered.json().id, name: 'everything', account_id: account.id, shared: false } as Parameters<typeof recordCall>[0];
    let written = 0;
    await timeRounds({ 'event write alone': () => recordCall(upstream, 'everything.get-sum', `exec_bench${++written}`, 'ok') }, ROUNDS, REQUESTS, 'write');
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
