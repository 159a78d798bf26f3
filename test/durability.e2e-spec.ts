/**
 * Nothing accepted is lost (issue 29): the database is the source of truth and each worker
 * reconciles the queue with it. Real PostgreSQL, Redis and service processes, faults injected.
 */
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { Client } from 'pg';
import { startTestApp, TestAccount, TestApp } from './support/app';
import { describeEachEngine } from './support/engines';
import { POSTGRES_URL_ENV } from './support/global-setup';
import { until } from './support/poll';
import { killProcess, ServiceProcess, startServiceProcess } from './support/processes';
import { RedisServer, startRedis } from './support/redis-server';
import { TestToolsModule } from './support/test-tools.module';

/** Every accepted execution is terminal within this long of a fault's end (the aim). */
const RECOVERY_BOUND_MS = 20_000;

describeEachEngine('durability', (mode) => {
  if (mode.name === 'embedded') return; // the embedded restart has its own suite below

  let api: TestApp;
  let acme: TestAccount;
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  let redis: RedisServer;
  const workers: ServiceProcess[] = [];

  beforeAll(async () => {
    redis = await startRedis(); // private: a test restarts it
    const prepared = await mode.prepare();
    cleanup = prepared.cleanup;
    env = { ...prepared.env, REDIS_URL: redis.url, RECONCILE_INTERVAL_SECONDS: '1', RECONCILE_MIN_AGE_SECONDS: '1' };
    api = await startTestApp({ env: { ...env, ROLE: 'api' }, extensions: [TestToolsModule] });
    acme = await api.createAccount('acme');
    env.WORKSPACE_ROOT = api.workspaceRoot;
  });

  afterEach(async () => {
    await Promise.all(workers.splice(0).map(killProcess));
  });

  afterAll(async () => {
    await api?.close();
    await redis?.stop();
    await cleanup?.();
  });

  const worker = async (extra: Record<string, string> = {}) => {
    const p = await startServiceProcess('worker', { ...env, ...extra });
    workers.push(p);
    return p;
  };
  const submitAll = (count: number, inputs: object) =>
    Promise.all(
      Array.from({ length: count }, async () => {
        const res = await api.request({ method: 'POST', url: '/v1/tools/test-record/invoke?async=true', key: acme.key, payload: { inputs } });
        expect(res.statusCode).toBe(202);
        return res.json().execution_id as string;
      }),
    );
  const statuses = async (ids: string[]) => {
    const res = await api.request({ method: 'GET', url: '/v1/executions?tool_id=test-record&limit=100', key: acme.key });
    const byId = new Map((res.json().executions as Array<{ id: string; status: string }>).map((e) => [e.id, e.status]));
    return ids.map((id) => byId.get(id));
  };
  const allSucceed = (ids: string[], what: string) =>
    until(what, async () => ((await statuses(ids)).every((s) => s === 'success') ? true : undefined), RECOVERY_BOUND_MS, 200);
  /** How many times each execution's tool ran, across processes. */
  const runCounts = (ids: string[]) => {
    const files = readdirSync(path.join(api.workspaceRoot, 'runs'));
    return ids.map((id) => files.filter((f) => f.startsWith(`${id}.`)).length);
  };

  it('Redis restarting without its data loses no queued execution: the reconciler queues each again, and each runs once', async () => {
    const busy = await worker({ WORKER_CONCURRENCY: '1' });
    const [blocker] = await submitAll(1, { ms: 2_000 });
    const waiting = await submitAll(20, {});
    await redis.kill();
    await redis.restart(); // no persistence: the 20 waiting jobs are gone
    const restarted = Date.now();
    await allSucceed([blocker, ...waiting], 'every execution to succeed after Redis lost its data');
    const recoveryMs = Date.now() - restarted;
    console.log(`Redis restart without data: ${waiting.length} queued executions recovered in ${recoveryMs} ms`);
    expect(runCounts(waiting)).toEqual(waiting.map(() => 1));
    for (const id of waiting) expect(busy.output()).toContain(`Execution ${id} was queued with no job behind it`);
  });

  (process.env[POSTGRES_URL_ENV] ? it : it.skip)('PostgreSQL going away while a worker takes its backlog: no execution is left queued, none runs twice', async () => {
    const name = new URL(env.DATABASE_URL).pathname.slice(1);
    const admin = async (sql: string) => {
      const client = new Client({ connectionString: process.env[POSTGRES_URL_ENV] });
      await client.connect();
      try {
        await client.query(sql);
      } finally {
        await client.end();
      }
    };
    const backlog = await submitAll(60, { ms: 100 });
    await worker({ WORKER_CONCURRENCY: '4' });
    await until('the worker to be consuming', async () => ((await statuses(backlog)).some((s) => s === 'success') ? true : undefined), 20_000, 50);
    await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
    await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`);
    try {
      // A fault of a given length, not an event to await: the runs ending meanwhile cannot write
      // their end, and (before issue 29) each such job freed its slot for the next, whose start
      // write failed and which Bull then dropped as failed.
      await new Promise((resolve) => setTimeout(resolve, 4_000));
    } finally {
      await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
    }
    const back = Date.now();
    await allSucceed(backlog, 'every execution of the backlog to succeed after the database came back');
    console.log(`PostgreSQL outage: backlog of ${backlog.length} all succeeded ${Date.now() - back} ms after the database came back`);
    expect(runCounts(backlog)).toEqual(backlog.map(() => 1));
  });
});
