/**
 * What the service adds to a call of an upstream MCP tool (docs/upstreams.md#calling-its-tools),
 * and what keeping sessions saves: the service in-process on PGlite, the official reference
 * server (`@modelcontextprotocol/server-everything`) over Streamable HTTP on 127.0.0.1, its
 * `get-sum` called four ways: directly with the SDK v2 client (negotiating as the service's does)
 * on one kept session (`direct-kept`)
 * and on a new session each call (`direct-fresh`: connect, call, close), and as the tool
 * `everything.get-sum` through inject() with the service's kept session (`federated-kept`) and
 * with its kept sessions closed before each call (`federated-fresh`, as calls were before
 * src/upstreams/upstream-sessions.ts). Rounds of each, alternating the order; prints per-call
 * microseconds (median of the rounds, their spread) and the paired differences.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { upstreamSessions } from '../src/upstreams/upstream-client';
import { startTestApp } from '../test/support/app';
import { startEverything } from '../test/support/everything-server';
import { printPaired, timeRounds } from './rounds';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100);

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tos-bench-mcp-upstream-'));
  const everything = await startEverything();
  const t = await startTestApp({ env: { DATA_DIR: dataDir, EGRESS_ALLOW: '127.0.0.1', SECRETS_KEY: randomBytes(32).toString('base64') } });
  const connect = async () => {
    // The client and negotiation the service's upstream calls use (src/upstreams/upstream-client.ts).
    const client = new Client({ name: 'bench', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(everything.url)));
    return client;
  };
  const kept = await connect();
  try {
    const account = await t.createAccount('bench-mcp-upstream');
    const registered = await t.request({ method: 'POST', url: '/v1/upstreams', key: account.key, payload: { name: 'everything', transport: 'streamable-http', url: everything.url, auth: { none: true } } });
    if (registered.statusCode !== 201) throw new Error(`registration: HTTP ${registered.statusCode}: ${registered.body}`);
    const summed = (text: unknown) => {
      if (!JSON.stringify(text).includes('42')) throw new Error(`unexpected answer: ${JSON.stringify(text)}`);
    };
    const federated = async () => {
      const res = await t.request({ method: 'POST', url: '/v1/tools/everything.get-sum/invoke', key: account.key, payload: { a: 2, b: 40 } });
      if (res.statusCode !== 200) throw new Error(`federated: HTTP ${res.statusCode}: ${res.body}`);
      summed(res.json().result.content);
    };
    const calls = {
      'direct-kept': async () => summed((await kept.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } })).content),
      'direct-fresh': async () => {
        const client = await connect();
        try {
          summed((await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } })).content);
        } finally {
          await client.close();
        }
      },
      'federated-kept': federated,
      'federated-fresh': async () => {
        upstreamSessions.closeAll();
        await federated();
      },
    };
    const times = await timeRounds(calls, ROUNDS, REQUESTS);
    for (const [a, b] of [['federated-kept', 'direct-kept'], ['federated-fresh', 'direct-fresh'], ['federated-fresh', 'federated-kept'], ['federated-kept', 'direct-fresh']] as const) printPaired(`${a} − ${b}`, times[a], times[b]);
  } finally {
    await kept.close();
    await t.close();
    everything.child.kill();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
