/**
 * What the service adds to a call of a stdio upstream's tool (docs/upstreams.md#local-stdio-servers):
 * the service in-process on PGlite with UPSTREAMS_STDIO=true, `@modelcontextprotocol/server-everything`
 * over stdio; `get-sum` called two ways, one call at a time: `direct` through an SDK client of our
 * own on its own stdio child, and `stdio` as the tool `everything.get-sum` through inject() (an
 * execution, the supervised child's slot and tools/call). Rounds of each, alternating the order;
 * per-call microseconds (median of the rounds, their spread) and the paired differences. Then the
 * cold start: a process stopped and started again by the next call (spawn + initialize + the call).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { AccountsService } from '../src/keys/accounts.service';
import { StdioSupervisor } from '../src/upstreams/stdio-supervisor';
import { UpstreamsService } from '../src/upstreams/upstreams.service';
import { startTestApp } from '../test/support/app';
import { median, printPaired, timeRounds } from './rounds';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100);
const COLD_STARTS = Number(process.env.BENCH_COLD_STARTS ?? 7);
const EVERYTHING = path.join(__dirname, '..', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');


async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tos-bench-stdio-'));
  const t = await startTestApp({ env: { DATA_DIR: dataDir, UPSTREAMS_STDIO: 'true', SECRETS_KEY: randomBytes(32).toString('base64') } });
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' }));
  try {
    const account = await t.createAccount('bench-stdio');
    const accountId = (await t.app.get(AccountsService).findByName('bench-stdio')).id;
    const upstream = await t.app.get(UpstreamsService).createByOperator({ accountId, name: 'everything', shared: false, stdio: { command: process.execPath, args: [EVERYTHING, 'stdio'], env_from_secrets: {} } });
    const calls = {
      direct: async () => {
        const answer = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } });
        if (!JSON.stringify(answer.content).includes('42')) throw new Error('direct: no 42');
      },
      stdio: async () => {
        const res = await t.request({ method: 'POST', url: '/v1/tools/everything.get-sum/invoke', key: account.key, payload: { a: 2, b: 40 } });
        if (res.statusCode !== 200 || !res.body.includes('42')) throw new Error(`stdio: HTTP ${res.statusCode}: ${res.body}`);
      },
    };
    const times = await timeRounds(calls, ROUNDS, REQUESTS);
    printPaired('stdio − direct', times.stdio, times.direct);

    const supervisor = t.app.get(StdioSupervisor);
    const cold: number[] = [];
    for (let i = 0; i < COLD_STARTS; i++) {
      await supervisor.stop(upstream.id as string);
      const started = process.hrtime.bigint();
      await calls.stdio();
      cold.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    console.log(`cold call (spawn + initialize + call) median ${median(cold).toFixed(0)} ms, ${Math.min(...cold).toFixed(0)}–${Math.max(...cold).toFixed(0)} (${COLD_STARTS} starts)`);
  } finally {
    await client.close();
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
