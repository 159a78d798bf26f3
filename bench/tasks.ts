/**
 * `npm run bench:tasks`: the round trip of an MCP task against the same call as a REST async
 * execution, one after another on the embedded service (compiled build): accept (tools/call with
 * the tasks extension declared → CreateTaskResult; POST ?async=true → 202), then polls every 5 ms
 * (tasks/get; GET /v1/executions/{id}) until it completed. The tool is `code-quality` (a
 * task-supporting tool, run in a worker thread) on a one-file workspace. Reports p50/p99 of
 * accept and of accept → completed for each door.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../test/support/free-port';
import { provisionBenchKey } from './provision';
import { spawnBuiltService } from './spawn-until-ready';

const ROOT = path.join(__dirname, '..');
const ROUND_TRIPS = Number(process.env.BENCH_ROUND_TRIPS ?? 200);
const POLL_MS = 5;
const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const ARGUMENTS = { path: '.' };

interface Door {
  name: string;
  accept(): Promise<string>;
  done(id: string): Promise<boolean>;
}

async function main(): Promise<void> {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const workspace = mkdtempSync(path.join(tmpdir(), 'tos-bench-tasks-'));
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tos-bench-data-'));
  writeFileSync(path.join(workspace, 'app.js'), 'export function add(a, b) {\n  return a + b;\n}\n');
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', DATA_DIR: dataDir, WORKSPACE_ROOT: workspace, SHUTDOWN_GRACE_SECONDS: '1' };
  const auth = { authorization: `Bearer ${provisionBenchKey(env)}` };
  const service = await spawnBuiltService({ name: 'service', env, isReady: async () => (await fetch(`${base}/v1/tools`, { headers: auth })).ok });
  try {
    const mcp = async (method: string, params: Record<string, unknown>, name: string) => {
      const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } };
      const res = await fetch(`${base}/v1/mcp`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': method, 'mcp-name': name },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } }),
      });
      const { result, error } = (await res.json()) as { result?: Record<string, unknown>; error?: unknown };
      if (!result) throw new Error(`${method}: ${JSON.stringify(error)}`);
      return result;
    };
    const finished = (status: unknown, id: string, ok: string) => {
      if (status === ok) return true;
      if (status === 'working' || status === 'queued' || status === 'running') return false;
      throw new Error(`${id} ended ${String(status)}`);
    };
    const doors: Door[] = [
      {
        name: 'MCP task (tools/call → tasks/get completed)',
        accept: async () => (await mcp('tools/call', { name: 'code-quality', arguments: ARGUMENTS }, 'code-quality')).taskId as string,
        done: async (id) => finished((await mcp('tasks/get', { taskId: id }, id)).status, id, 'completed'),
      },
      {
        name: 'REST async (POST ?async=true → GET success)',
        accept: async () => {
          const res = await fetch(`${base}/v1/tools/code-quality/invoke?async=true`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(ARGUMENTS) });
          return ((await res.json()) as { execution_id: string }).execution_id;
        },
        done: async (id) => finished(((await (await fetch(`${base}/v1/executions/${id}`, { headers: auth })).json()) as { status: string }).status, id, 'success'),
      },
    ];
    const report: Record<string, unknown> = { round_trips: ROUND_TRIPS, poll_ms: POLL_MS };
    for (const door of doors) {
      await roundTrip(door); // warm-up
      const accepts: number[] = [];
      const totals: number[] = [];
      for (let i = 0; i < ROUND_TRIPS; i++) {
        const { acceptMs, totalMs } = await roundTrip(door);
        accepts.push(acceptMs);
        totals.push(totalMs);
      }
      report[door.name] = { accept_p50_ms: percentile(accepts, 50), accept_p99_ms: percentile(accepts, 99), completed_p50_ms: percentile(totals, 50), completed_p99_ms: percentile(totals, 99) };
    }
    console.log(JSON.stringify(report, null, 2));
  } finally {
    await service.stop();
    rmSync(workspace, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function roundTrip(door: Door): Promise<{ acceptMs: number; totalMs: number }> {
  const started = performance.now();
  const id = await door.accept();
  const acceptMs = performance.now() - started;
  while (!(await door.done(id))) await sleep(POLL_MS);
  return { acceptMs, totalMs: performance.now() - started };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] * 10) / 10;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
