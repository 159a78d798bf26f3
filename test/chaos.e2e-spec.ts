/**
 * The chaos suite (docs/testing.md): one API and two worker processes on PostgreSQL and Redis, async
 * webhook-trigger calls to a loopback receiver under load, and one fault per scenario. After each:
 * every accepted execution ends within RECOVERY_BOUND_MS of the fault's end, none is left queued or
 * running, no answer is a 500, and every delivery is accounted for by its `webhook-id` (the
 * execution id): a successful execution was delivered exactly once; only one whose outcome is
 * unknown may have been delivered more than once.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import Redis from 'ioredis';
import { generateSecret } from '../src/identity/key-secret';
import { createTestDatabase, postgresUrl, queryOnce, type TestDatabase } from './support/databases';
import { freePort } from './support/free-port';
import { listenHttp } from './support/http-listen';
import { until } from './support/poll';
import { killProcess, startServiceProcess, type ServiceProcess } from './support/processes';
import { startRedis, type RedisServer } from './support/redis-server';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';

/** Every accepted execution is terminal within this long of the fault's end. */
const RECOVERY_BOUND_MS = 60_000;
/** Load per scenario: one async invoke every LOAD_EVERY_MS for LOAD_MS, at most LOAD_MAX calls. */
const LOAD_MS = 3_000;
const LOAD_EVERY_MS = 60;
const LOAD_MAX = 50;
/** The fault comes once this many calls were accepted. */
const FAULT_AFTER_ACCEPTED = 10;
/** The receiver holds each delivery this long, so that faults find deliveries in flight. */
const RECEIVER_DELAY_MS = 150;
const TERMINAL = ['success', 'error', 'cancelled'];

interface Row {
  scenario: string;
  accepted: number;
  succeeded: number;
  failed: number;
  unknown: number;
  stuck: number;
  deliveries: number;
  distinct: number;
  duplicates: number;
  recovery_s: number;
}

describe('chaos: 1 API + 2 workers under faults', () => {
  const apiKey = generateSecret('service');
  const table: Row[] = [];
  /** Every HTTP status the load and the checks received, and the requests that got no answer. */
  const answers = new Map<number, number>();
  let unanswered = 0;
  /** webhook-id → deliveries received. */
  const delivered = new Map<string, number>();
  let database: TestDatabase;
  let proxy: TcpProxy;
  let redis: RedisServer;
  let receiver: { url: string; close(): Promise<void> };
  let workspace: string;
  let env: Record<string, string>;
  let apiPort: number;
  const metricsPorts = { api: 0, w0: 0, w1: 0 };
  const processes: Partial<Record<'api' | 'w0' | 'w1', ServiceProcess>> = {};
  /** Every process started, killed ones included: what they logged about an execution explains a failure. */
  const started: ServiceProcess[] = [];
  const logsAbout = (ids: string[]) =>
    started.flatMap((p) => p.output().split('\n').filter((line) => ids.some((id) => line.includes(id)))).join('\n');

  const start = async (name: 'api' | 'w0' | 'w1') => {
    const role = name === 'api' ? 'api' : 'worker';
    processes[name] = await startServiceProcess(role, { ...env, METRICS_PORT: String(metricsPorts[name]) });
    started.push(processes[name]);
  };

  beforeAll(async () => {
    database = await createTestDatabase(postgresUrl());
    const pg = new URL(database.url);
    proxy = await startTcpProxy(pg.hostname, Number(pg.port));
    const proxied = new URL(database.url);
    proxied.port = String(proxy.port);
    redis = await startRedis(); // private: scenarios restart it
    receiver = await listenHttp(
      createServer((req, res) => {
        const id = String(req.headers['webhook-id']);
        delivered.set(id, (delivered.get(id) ?? 0) + 1);
        req.resume();
        req.on('end', () => setTimeout(() => res.writeHead(200).end('{}'), RECEIVER_DELAY_MS));
      }),
    );
    workspace = mkdtempSync(path.join(tmpdir(), 'tos-chaos-'));
    apiPort = await freePort();
    for (const name of ['api', 'w0', 'w1'] as const) metricsPorts[name] = await freePort();
    env = {
      DATABASE_URL: proxied.toString(),
      REDIS_URL: redis.url,
      QUEUE_PREFIX: `c${randomBytes(5).toString('hex')}`,
      WORKSPACE_ROOT: workspace,
      PORT: String(apiPort),
      BOOTSTRAP_API_KEY: apiKey,
      BOOTSTRAP_TIER: 'enterprise',
      EGRESS_ALLOW: '127.0.0.0/8',
      WORKER_CONCURRENCY: '4',
      // Fast recovery, as in the durability suite: lost jobs back within ~2 s, dead workers' locks lapse in 2 s.
      RECONCILE_INTERVAL_SECONDS: '1',
      RECONCILE_MIN_AGE_SECONDS: '1',
      QUEUE_LOCK_SECONDS: '2',
      SHUTDOWN_GRACE_SECONDS: '10',
    };
    // The API first: it creates the schema and the bootstrap key.
    await start('api');
    await Promise.all([start('w0'), start('w1')]);
  }, 120_000);

  afterAll(async () => {
    console.log(`chaos results (recovery bound ${RECOVERY_BOUND_MS / 1000} s after each fault's end):\n${formatTable(table)}`);
    await Promise.allSettled(Object.values(processes).map((p) => killProcess(p)));
    await Promise.allSettled([proxy?.close(), redis?.stop(), receiver?.close()]);
    await database?.drop().catch(() => undefined);
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  }, 60_000);

  const count = (status: number) => answers.set(status, (answers.get(status) ?? 0) + 1);
  const invoke = async (): Promise<string | undefined> => {
    try {
      const res = await fetch(`http://127.0.0.1:${apiPort}/v1/tools/webhook-trigger/invoke?async=true`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        // One attempt: every delivery of an id beyond the first is a duplicate run.
        body: JSON.stringify({ inputs: { url: `${receiver.url}/hook`, payload: { n: 1 }, max_attempts: 1 } }),
        signal: AbortSignal.timeout(15_000),
      });
      count(res.status);
      const body = (await res.json()) as { execution_id?: string };
      return res.status === 202 ? body.execution_id : undefined;
    } catch {
      unanswered++; // the API is down or was killed holding the request
      return undefined;
    }
  };
  /** Invokes every LOAD_EVERY_MS for LOAD_MS; resolves with the accepted ids once every call has been answered. */
  const load = (accepted: string[]) => {
    const calls: Promise<void>[] = [];
    const deadline = Date.now() + LOAD_MS;
    return new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (Date.now() > deadline || calls.length >= LOAD_MAX) {
          clearInterval(timer);
          void Promise.all(calls).then(() => resolve());
          return;
        }
        calls.push(invoke().then((id) => void (id && accepted.push(id))));
      }, LOAD_EVERY_MS);
    });
  };
  const db = <T>(sql: string, params: unknown[] = [], url = database.url) => queryOnce<T>(url, sql, params);
  /** The sum of a metric's series on one process; 0 when it is not running. */
  const metric = async (name: keyof typeof metricsPorts, metricName: string) => {
    if (!processes[name] || processes[name]!.child.exitCode !== null || processes[name]!.child.signalCode !== null) return 0;
    const text = await (await fetch(`http://127.0.0.1:${metricsPorts[name]}/metrics`)).text();
    const series = text.split('\n').filter((line) => line.startsWith(`${metricName}{`) || line.startsWith(`${metricName} `));
    return series.reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
  };
  const metricAll = async (metricName: string) => (await Promise.all((['api', 'w0', 'w1'] as const).map((n) => metric(n, metricName)))).reduce((a, b) => a + b, 0);

  /**
   * Load, the fault once some calls were accepted, then the checks. `fault` resolves when the fault
   * has ended (the component is back); `restore` restarts what the fault killed for the next scenario.
   */
  const scenario = async (name: string, fault: () => Promise<void>, options: { burst?: number; restore?: () => Promise<void> } = {}) => {
    const accepted: string[] = [];
    const unansweredBefore = unanswered;
    const deliveredBefore = new Map(delivered);
    const loading = load(accepted);
    await until(`${FAULT_AFTER_ACCEPTED} calls accepted before the fault`, async () => (accepted.length >= FAULT_AFTER_ACCEPTED ? true : undefined), 20_000, 20);
    // A burst the workers cannot take at once: the fault finds jobs waiting in the queue.
    const burst = await Promise.all(Array.from({ length: options.burst ?? 0 }, invoke));
    accepted.push(...burst.filter((id): id is string => !!id));
    await fault();
    const faultEnded = Date.now();
    await loading;
    let last: { id: string; status: string }[] = [];
    let recoveredAt = 0;
    const rows = await until(
      `every accepted execution of "${name}" to end`,
      async () => {
        const got = await db<{ id: string; status: string; error: { details?: { outcome_unknown?: boolean } } | null }>(
          'SELECT id, status, error FROM executions WHERE id = ANY($1)',
          [accepted],
        ).catch(() => undefined);
        last = got ?? last;
        if (!got || got.length !== accepted.length || !got.every((r) => TERMINAL.includes(r.status))) return undefined;
        recoveredAt = Date.now();
        return got;
      },
      RECOVERY_BOUND_MS - (Date.now() - faultEnded),
      200,
    )
      .catch((error: Error) => {
        const pending = last.filter((r) => !TERMINAL.includes(r.status)).map((r) => r.id);
        throw new Error(`${error.message}; not ended: ${pending.join(', ')}; what the processes logged about them:\n${logsAbout(pending)}`);
      })
      .finally(() => options.restore?.());
    const recovery = (recoveredAt - faultEnded) / 1000;
    // None left behind anywhere, including executions whose acceptance the client never heard of.
    const stuck = await db<{ id: string; status: string }>("SELECT id, status FROM executions WHERE status NOT IN ('success', 'error', 'cancelled')");
    const deliveriesOf = (id: string) => (delivered.get(id) ?? 0) - (deliveredBefore.get(id) ?? 0);
    const succeeded = rows.filter((r) => r.status === 'success');
    const unknown = rows.filter((r) => r.status !== 'success' && r.error?.details?.outcome_unknown === true);
    const otherFailures = rows.filter((r) => r.status !== 'success' && r.error?.details?.outcome_unknown !== true);
    const newIds = [...delivered.keys()].filter((id) => deliveriesOf(id) > 0);
    const deliveries = newIds.reduce((sum, id) => sum + deliveriesOf(id), 0);
    table.push({
      scenario: name,
      accepted: accepted.length,
      succeeded: succeeded.length,
      failed: rows.length - succeeded.length,
      unknown: unknown.length,
      stuck: stuck.length,
      deliveries,
      distinct: newIds.length,
      duplicates: deliveries - newIds.length,
      recovery_s: recovery,
    });

    expect({ stuck, logs: logsAbout(stuck.map((r) => r.id)) }).toEqual({ stuck: [], logs: '' });
    expect(answers.get(500) ?? 0).toBe(0);
    // A success was delivered exactly once; a failure known not to have run, never.
    expect(succeeded.filter((r) => deliveriesOf(r.id) !== 1)).toEqual([]);
    expect(otherFailures.filter((r) => deliveriesOf(r.id) !== 0)).toEqual([]);
    // A delivery whose id no 202 named can only come from a call whose answer was lost (the API killed holding it).
    expect(newIds.filter((id) => !accepted.includes(id)).length).toBeLessThanOrEqual(unanswered - unansweredBefore);
    return { accepted, rows, unknown };
  };

  const stopBy = async (name: 'api' | 'w0' | 'w1', signal: NodeJS.Signals) => {
    const p = processes[name]!;
    p.child.kill(signal);
    return p.exited;
  };

  it('kill -9 of a worker under load: its running executions end outcome unknown, the rest run once', async () => {
    const abandonedBefore = await metricAll('tos_executions_abandoned_total');
    // Recovery counts from the kill: the survivor alone ends or runs everything; w0 comes back after.
    const { unknown } = await scenario('kill -9 worker', () => stopBy('w0', 'SIGKILL').then(() => undefined), { restore: () => start('w0') });
    // Each execution the dead worker held was ended by a live process, which counted it (w0's own count died with it).
    expect((await metricAll('tos_executions_abandoned_total')) - abandonedBefore).toBeGreaterThanOrEqual(unknown.length);
  }, 120_000);

  it('Redis restart without persistence: the reconciler queues the lost executions again', async () => {
    const reconciledBefore = (await metric('w0', 'tos_executions_reconciled_total')) + (await metric('w1', 'tos_executions_reconciled_total'));
    await scenario('Redis restart (no persistence)', async () => {
      await redis.kill();
      await redis.restart();
    }, { burst: 30 });
    const reconciled = (await metric('w0', 'tos_executions_reconciled_total')) + (await metric('w1', 'tos_executions_reconciled_total'));
    expect(reconciled).toBeGreaterThan(reconciledBefore);
  }, 120_000);

  it('PostgreSQL restart: every connection cut, refused for 3 s, back', async () => {
    await scenario('PostgreSQL restart', async () => {
      await proxy.down();
      await new Promise((resolve) => setTimeout(resolve, 3_000)); // the outage lasts: a fault of a given length, not an event
      await proxy.up();
    });
  }, 120_000);

  it('SIGTERM of a worker: it drains, the other takes its queue', async () => {
    await scenario('SIGTERM worker', async () => {
      expect(await stopBy('w1', 'SIGTERM')).toBe('SIGTERM');
    }, { restore: () => start('w1') });
  }, 120_000);

  it('kill -9 of the API', async () => {
    await scenario('kill -9 API', async () => {
      await stopBy('api', 'SIGKILL');
      await start('api');
    });
  }, 120_000);

  it('SIGTERM of the API: it drains', async () => {
    await scenario('SIGTERM API', async () => {
      expect(await stopBy('api', 'SIGTERM')).toBe('SIGTERM');
      await start('api');
    });
  }, 120_000);

  it('PostgreSQL refusing connections for 10 s', async () => {
    const name = new URL(database.url).pathname.slice(1);
    const admin = (sql: string) => db(sql, [], postgresUrl());
    await scenario('PostgreSQL refusing 10 s', async () => {
      await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
      try {
        await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`);
        await new Promise((resolve) => setTimeout(resolve, 10_000)); // the outage lasts: a fault of a given length, not an event
      } finally {
        await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
      }
    });
  }, 120_000);

  it('Redis restart with persistence (appendonly): nothing is lost, so nothing needs reconciling', async () => {
    const client = new Redis(redis.url);
    try {
      await client.config('SET', 'appendonly', 'yes');
      await until('the append-only file to be written', async () => (/aof_rewrite_in_progress:0/.test(await client.info('persistence')) && /aof_enabled:1/.test(await client.info('persistence')) ? true : undefined), 10_000, 50);
    } finally {
      client.disconnect();
    }
    await scenario('Redis restart (appendonly)', async () => {
      await redis.kill();
      await redis.restart({ appendonly: true });
    }, { burst: 30 });
  }, 120_000);
});

function formatTable(rows: Row[]): string {
  if (rows.length === 0) return '(no scenario ran)';
  const columns = Object.keys(rows[0]) as (keyof Row)[];
  const cells = rows.map((row) => columns.map((c) => (typeof row[c] === 'number' && c === 'recovery_s' ? row[c].toFixed(1) : String(row[c]))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
  const line = (values: string[]) => `| ${values.map((v, i) => v.padEnd(widths[i])).join(' | ')} |`;
  return [line(columns), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(line)].join('\n');
}
