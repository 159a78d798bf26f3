/**
 * Nothing accepted is lost (docs/executions.md#guarantees): the database is the source of truth and each worker
 * reconciles the queue with it. Real PostgreSQL, Redis and service processes, faults injected.
 */
import Bull from 'bull';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Webhook } from 'standardwebhooks';
import * as path from 'node:path';
import { generateSecret } from '../src/identity/key-secret';
import { ExecutionQueue } from '../src/executions/engine/queue/execution-queue';
import { startTestApp, TestAccount, TestApp, useTestApp } from './support/app';
import { asAdmin, DATABASE_MODES } from './support/databases';
import { describeEachEngine } from './support/engines';
import { freePort } from './support/free-port';
import { until } from './support/poll';
import { killProcess, ServiceProcess, startEmbeddedService, startServiceProcess } from './support/processes';
import { startRecordingServer } from './support/recording-server';
import { RedisServer, startRedis } from './support/redis-server';
import { TestToolsModule } from './support/test-tools.module';

/** Every accepted execution is terminal within this long of a fault's end (the aim is 60 s; these faults are short). */
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
    env = {
      ...prepared.env,
      REDIS_URL: redis.url,
      RECONCILE_INTERVAL_SECONDS: '1',
      RECONCILE_MIN_AGE_SECONDS: '1',
      // Webhooks to a loopback receiver, one retry 3 s after a failed attempt.
      SECRETS_KEY: randomBytes(32).toString('base64'),
      EGRESS_ALLOW: '127.0.0.1',
      WEBHOOK_POLL_MS: '50',
      WEBHOOK_RETRY_SCHEDULE: '3',
    };
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
    const metricsPort = await freePort();
    const busy = await worker({ WORKER_CONCURRENCY: '1', METRICS_PORT: String(metricsPort) });
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
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/^tos_executions_reconciled_total\{role="worker"\} 20$/m);
    expect(metrics).toMatch(/^tos_worker_heartbeats_total\{role="worker"\} [1-9]\d*$/m);
    // Read at the last pass, which may precede the last runs: present, and never more than were lost.
    expect(Number(/^tos_executions_queued_without_job\{role="worker"\} (\d+)$/m.exec(metrics)?.[1])).toBeLessThanOrEqual(20);
    expect(metrics).toMatch(/^tos_executions_oldest_queued_age_seconds\{role="worker"\} [\d.e+-]+$/m);
  });

  it('an API process killed during a sync call: a live process ends its execution as outcome unknown within seconds, not at its deadline', async () => {
    await worker(); // beats, like the in-process API: either may find the dead one
    const port = await freePort();
    const doomed = await startServiceProcess('api', { ...env, PORT: String(port) });
    try {
      const call = fetch(`http://127.0.0.1:${port}/v1/tools/test-sleep/invoke?timeout=60`, {
        method: 'POST',
        headers: { authorization: `Bearer ${acme.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ms: 50_000 }),
      }).catch(() => undefined); // the connection dies with the process
      const running = async () => (await api.request({ method: 'GET', url: '/v1/executions?tool_id=test-sleep&status=running', key: acme.key })).json().executions[0]?.id as string | undefined;
      const id = await until('the sync call to be running', running, 15_000, 100);
      doomed.child.kill('SIGKILL');
      await doomed.exited;
      const killed = Date.now();
      const ended = await until(
        'its execution to end',
        async () => {
          const execution = (await api.request({ method: 'GET', url: `/v1/executions/${id}`, key: acme.key })).json();
          return execution.status === 'running' ? undefined : execution;
        },
        RECOVERY_BOUND_MS,
        200,
      );
      console.log(`API process killed mid sync call: its execution ended ${Date.now() - killed} ms later (its deadline was 60 s + SWEEP_GRACE_SECONDS away)`);
      expect(ended).toMatchObject({ status: 'error', error: { code: 'INTERNAL_ERROR', details: { outcome_unknown: true }, message: expect.stringContaining('API process') } });
      await call;
    } finally {
      await killProcess(doomed);
    }
  });

  it('a worker killed (SIGKILL) mid-retry of a webhook: another worker sends the retry under the same webhook-id, and nothing twice', async () => {
    let answered = 0;
    const receiver = await startRecordingServer(() => ({ status: ++answered === 1 ? 503 : 200 }));
    try {
      const first = await worker();
      const created = await api.request({ method: 'POST', url: '/v1/webhooks', key: acme.key, payload: { url: `${receiver.url}/hook`, events: ['execution.completed'], tool_ids: ['json-transform'] } });
      expect(created.statusCode).toBe(201);
      const hook = created.json();
      const call = await api.request({ method: 'POST', url: '/v1/tools/json-transform/invoke', key: acme.key, payload: { inputs: { expression: '6 * 7', data: {} } } });
      expect(call.statusCode).toBe(200);
      const deliveries = async () => (await api.request({ method: 'GET', url: `/v1/webhooks/${hook.id}/deliveries`, key: acme.key })).json().deliveries as Array<Record<string, any>>;
      // The 503 is recorded and the retry is 3 s away: the worker dies with the delivery in its schedule.
      await until('the first attempt recorded', async () => ((await deliveries())[0]?.attempts.length === 1 ? true : undefined), RECOVERY_BOUND_MS, 100);
      await killProcess(first);
      await worker();
      const [delivered] = await until('the retry delivered by the second worker', async () => {
        const log = await deliveries();
        return log[0]?.status === 'delivered' ? log : undefined;
      }, RECOVERY_BOUND_MS, 200);
      expect(delivered.attempts.map((attempt: { status_code: number }) => attempt.status_code)).toEqual([503, 200]);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(receiver.received.map((request) => request.headers['webhook-id'])).toEqual([delivered.id, delivered.id]);
      const [, retried] = receiver.received;
      const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(retried.headers[name])]));
      expect(new Webhook(hook.secret).verify(retried.body, headers)).toMatchObject({ event: 'execution.completed', data: { execution_id: call.json().execution_id, result: { result: 42 } } });
    } finally {
      await receiver.close();
    }
  });

  it('PostgreSQL going away while a worker takes its backlog: the jobs it could not start are retried, none is left queued, none runs twice', async () => {
    const name = new URL(env.DATABASE_URL).pathname.slice(1);
    const backlog = await submitAll(60, { ms: 100 });
    // No reconciler: Bull's retries alone must carry the jobs over the outage.
    await worker({ WORKER_CONCURRENCY: '4', RECONCILE_INTERVAL_SECONDS: '0' });
    await until('the worker to be consuming', async () => ((await statuses(backlog)).some((s) => s === 'success') ? true : undefined), 20_000, 50);
    const queue = new Bull('executions', { prefix: env.QUEUE_PREFIX, redis: env.REDIS_URL });
    try {
      await queue.pause(); // globally: the worker takes nothing more until the database is away
      await until('the runs in flight to end', async () => ((await statuses(backlog)).includes('running') ? undefined : true), 10_000, 50);
      await asAdmin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
      await asAdmin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`);
      try {
        // The worker takes jobs whose `running` write is refused: before the retries each of those
        // was dropped as failed, its row left queued for QUEUE_MAX_WAIT_SECONDS.
        await queue.resume();
        // Waiting for its retry (delayed), or failed for good.
        await until('a job refused by the database', async () => ((await queue.getDelayedCount()) + (await queue.getFailedCount()) > 0 ? true : undefined), 10_000, 50);
        await new Promise((resolve) => setTimeout(resolve, 3_000)); // the outage lasts: a fault of a given length, not an event
      } finally {
        await asAdmin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
      }
    } finally {
      await queue.close();
    }
    const back = Date.now();
    await allSucceed(backlog, 'every execution of the backlog to succeed after the database came back');
    console.log(`PostgreSQL outage: backlog of ${backlog.length} all succeeded ${Date.now() - back} ms after the database came back`);
    expect(runCounts(backlog)).toEqual(backlog.map(() => 1));
    expect(workers[0].output()).toMatch(/Execution exec_\w+ could not be started .*; its job is tried again/);
  });
});

describe('an embedded service killed (SIGKILL) and started again', () => {
  const apiKey = generateSecret('service');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tos-durable-'));
  const secretsKey = randomBytes(32).toString('base64');
  const processes: ServiceProcess[] = [];

  afterAll(async () => {
    await Promise.all(processes.map(killProcess));
    rmSync(dataDir, { recursive: true, force: true });
  });

  const start = async () => {
    const started = await startEmbeddedService(dataDir, apiKey, { WORKER_CONCURRENCY: '1', SECRETS_KEY: secretsKey, EGRESS_ALLOW: '127.0.0.0/8', WEBHOOK_POLL_MS: '50' });
    processes.push(started.service);
    return started;
  };
  it('ends the interrupted run as outcome unknown, runs every queued call, secrets included, once, and resends a webhook cut mid-attempt at once', async () => {
    // The webhook subscription's first attempt never gets an answer: the process dies holding its lease.
    let events = 0;
    const hook = await startRecordingServer((request) => (request.url === '/events' && ++events === 1 ? null : { status: 204 }));
    try {
      const first = await start();
      const submit = async (toolId: string, inputs: object) => {
        const res = await first.call('POST', `/v1/tools/${toolId}/invoke?async=true`, { inputs });
        expect(res.status).toBe(202);
        return res.body.execution_id as string;
      };
      const interrupted = await submit('test-sleep', { ms: 60_000 });
      await until('the first call to run', async () => ((await first.call('GET', `/v1/executions/${interrupted}`)).body.status === 'running' ? true : undefined));
      const transform = await submit('json-transform', { expression: 'a + 1', data: { a: 1 } });
      const unsigned = await submit('webhook-trigger', { url: `${hook.url}/unsigned`, payload: { n: 1 } });
      const signed = await submit('webhook-trigger', { url: `${hook.url}/signed`, payload: { n: 2 }, secret: 'whsec-survives-restart' });
      const subscription = await first.call('POST', '/v1/webhooks', { url: `${hook.url}/events`, events: ['execution.completed'], tool_ids: ['test-record'] });
      expect(subscription.status).toBe(201);
      expect((await first.call('POST', '/v1/tools/test-record/invoke', { inputs: {} })).status).toBe(200);
      await until('the first webhook attempt under way', async () => (events === 1 ? true : undefined));
      await killProcess(first.service);

      const second = await start();
      const ended = async (id: string) =>
        until(`${id} to end`, async () => {
          const got = await second.call('GET', `/v1/executions/${id}`);
          return ['success', 'error', 'cancelled'].includes(got.body.status) ? got.body : undefined;
        }, RECOVERY_BOUND_MS, 100);
      expect(await ended(interrupted)).toMatchObject({
        status: 'error',
        error: { code: 'INTERNAL_ERROR', retryable: true, message: expect.stringContaining('may have run'), details: { outcome_unknown: true }, suggestion: expect.stringContaining('idempotency key') },
      });
      expect(await ended(transform)).toMatchObject({ status: 'success', result: { result: 2 } });
      expect(await ended(unsigned)).toMatchObject({ status: 'success', result: { delivered: true, signed: false } });
      expect(await ended(signed)).toMatchObject({ status: 'success', result: { delivered: true, signed: true } });
      expect(hook.received.map((r) => r.url).filter((url) => url !== '/events').sort()).toEqual(['/signed', '/unsigned']);
      // Resent as soon as the service is back, not when the dead process's lease (10 s + 60 s) lapses.
      await until('the webhook resent', async () => (events === 2 ? true : undefined), RECOVERY_BOUND_MS);
      const [cut, resent] = hook.received.filter((r) => r.url === '/events');
      expect(resent.headers['webhook-id']).toBe(cut.headers['webhook-id']);
      const [delivery] = (await second.call('GET', `/v1/webhooks/${subscription.body.id}/deliveries`)).body.deliveries;
      expect(delivery).toMatchObject({ id: cut.headers['webhook-id'], status: 'delivered' });
      expect(second.service.output()).toContain(`Execution ${interrupted} ended by the restart: interrupted`);
    } finally {
      await hook.close();
    }
    // Two cold starts of the service from its sources (each up to a minute on a loaded 2-core machine).
  }, 180_000);
});

describe('the reconciler on the embedded queue, without SECRETS_KEY', () => {
  const suite = useTestApp(DATABASE_MODES[0], {
    extensions: [TestToolsModule],
    env: { WORKER_CONCURRENCY: '1', RECONCILE_INTERVAL_SECONDS: '1', RECONCILE_MIN_AGE_SECONDS: '1' },
  });
  const submit = async (toolId: string, inputs: object) => {
    const res = await suite.t.request({ method: 'POST', url: `/v1/tools/${toolId}/invoke?async=true`, key: suite.acme.key, payload: { inputs } });
    expect(res.statusCode).toBe(202);
    return res.json().execution_id as string;
  };
  const ended = (id: string) =>
    until(`${id} to end`, async () => {
      const got = (await suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key: suite.acme.key })).json();
      return ['success', 'error', 'cancelled'].includes(got.status) ? got : undefined;
    }, 10_000, 100);

  it('queues again a call whose job was lost, and ends one whose secret was never kept, saying it never started', async () => {
    await submit('test-sleep', { ms: 1_500 }); // holds the one slot: the next two wait
    const plain = await submit('json-transform', { expression: 'a * 2', data: { a: 21 } });
    const secret = await submit('webhook-trigger', { url: 'http://127.0.0.1:9/', payload: {}, secret: 'whsec-never-stored' });
    const queue = suite.t.app.get(ExecutionQueue);
    expect(await queue.remove(plain)).toBe(true); // the queue loses both jobs
    expect(await queue.remove(secret)).toBe(true);
    expect(await ended(plain)).toMatchObject({ status: 'success', result: { result: 42 } });
    expect(await ended(secret)).toMatchObject({
      status: 'error',
      started_at: null,
      error: { code: 'INTERNAL_ERROR', retryable: true, message: expect.stringMatching(/secret inputs.*never started/), details: { outcome_unknown: false } },
    });
  });
});
