/**
 * The distributed engine across processes: an API process (this test) and worker processes
 * sharing PostgreSQL and Redis.
 */
import Redis from 'ioredis';
import { existsSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { QueueConsumer } from '../src/executions/engine/queue-consumer';
import { RedisConnections } from '../src/redis/redis-connections';
import { startTestApp, TestAccount, TestApp } from './support/app';
import { describeEachEngine } from './support/engines';
import { until } from './support/poll';
import { killProcess, ServiceProcess, startServiceProcess } from './support/processes';
import { RedisServer, startRedis } from './support/redis-server';
import { startRecordingServer } from './support/recording-server';
import { TestToolsModule } from './support/test-tools.module';

/** Preloaded into a process under test: it prints the npm packages it loaded as it exits. */
const REPORT_LOADED_PACKAGES = path.join(__dirname, 'support', 'report-loaded-packages.ts');

describeEachEngine('worker processes', (mode) => {
  if (mode.name === 'embedded') return; // one process owns an embedded service: nothing to share

  let api: TestApp;
  let acme: TestAccount;
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  const workers: ServiceProcess[] = [];

  beforeAll(async () => {
    const prepared = await mode.prepare();
    cleanup = prepared.cleanup;
    api = await startTestApp({ env: { ...prepared.env, ROLE: 'api' }, extensions: [TestToolsModule] });
    acme = await api.createAccount('acme');
    env = { ...prepared.env, WORKSPACE_ROOT: api.workspaceRoot, QUEUE_LOCK_SECONDS: '2', SHUTDOWN_GRACE_SECONDS: '10' };
  });

  afterEach(async () => {
    await Promise.all(workers.splice(0).map(killProcess));
  });

  afterAll(async () => {
    await api?.close();
    await cleanup?.();
  });

  const worker = async (extra: Record<string, string> = {}) => {
    const p = await startServiceProcess('worker', { ...env, ...extra });
    workers.push(p);
    return p;
  };
  const submit = async (toolId: string, inputs: object) => {
    const res = await api.request({ method: 'POST', url: `/v1/tools/${toolId}/invoke?async=true`, key: acme.key, payload: { inputs } });
    // The answer's body says why when it is not accepted.
    expect({ status: res.statusCode, body: res.statusCode === 202 ? '' : res.body }).toEqual({ status: 202, body: '' });
    return res.json().execution_id as string;
  };
  const read = async (id: string) => (await api.request({ method: 'GET', url: `/v1/executions/${id}`, key: acme.key })).json();
  /** The pids of the processes that ran an execution of test-record. */
  const ranBy = (id: string) =>
    readdirSync(path.join(api.workspaceRoot, 'runs'))
      .filter((f) => f.startsWith(`${id}.`))
      .map((f) => Number(f.split('.')[1]));
  const status = (id: string, wanted: string, timeoutMs?: number) =>
    until(`${id} to be ${wanted}`, async () => ((await read(id)).status === wanted ? true : undefined), timeoutMs);

  it('the API process never runs async work itself; a worker process does', async () => {
    const id = await submit('test-record', {});
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await read(id)).status).toBe('queued');
    const w = await worker();
    await status(id, 'success');
    expect(ranBy(id)).toEqual([w.child.pid]);
  });

  it('a worker process loads none of the API role\'s libraries (the MCP SDKs, Swagger)', async () => {
    const w = await worker({ NODE_OPTIONS: `-r ${REPORT_LOADED_PACKAGES}` });
    w.child.kill('SIGUSR2');
    const line = await until('the loaded packages', async () => /^loaded-packages: (.*)$/m.exec(w.output())?.[1]);
    const loaded: string[] = JSON.parse(line);
    expect(loaded).toEqual(expect.arrayContaining(['bull', '@nestjs/core']));
    for (const apiOnly of ['@modelcontextprotocol/sdk', '@modelcontextprotocol/server', '@nestjs/swagger']) expect(loaded).not.toContain(apiOnly);
  });

  it('two workers share the queue: 1,000 executions all succeed and none runs twice', async () => {
    const [a, b] = await Promise.all([worker({ WORKER_CONCURRENCY: '8' }), worker({ WORKER_CONCURRENCY: '8' })]);
    const count = async (state: string) =>
      (await api.request({ method: 'GET', url: `/v1/executions?tool_id=test-record&status=${state}&limit=1`, key: acme.key })).json().total as number;
    const before = await count('success');
    const ids = await Promise.all(Array.from({ length: 1000 }, () => submit('test-record', {})));
    await until('1000 executions to succeed', async () => ((await count('success')) - before === ids.length ? true : undefined), 90_000, 200);
    expect(await count('error')).toBe(0);
    const runs = readdirSync(path.join(api.workspaceRoot, 'runs')).filter((f) => ids.includes(f.split('.')[0]));
    const perExecution = new Map<string, number>();
    for (const file of runs) perExecution.set(file.split('.')[0], (perExecution.get(file.split('.')[0]) ?? 0) + 1);
    expect(perExecution.size).toBe(ids.length);
    expect([...perExecution.values()].every((n) => n === 1)).toBe(true);
    const pids = new Set(runs.map((f) => Number(f.split('.')[1])));
    expect(pids).toEqual(new Set([a.child.pid, b.child.pid]));
  });

  it('streams the events of an execution that a worker process runs', async () => {
    await worker();
    const id = await submit('test-sleep', { ms: 600 });
    const res = await api.request({ method: 'GET', url: `/v1/executions/${id}/events`, key: acme.key });
    const events = res.body.split('\n\n').filter((b) => b.startsWith('event:')).map((b) => b.split('\n')[0].slice(7));
    expect(events).toContain('progress');
    expect(events[events.length - 1]).toBe('result');
    expect(res.body).toContain('"slept_ms":600');
  });

  it('cancelling an execution running in another process aborts it there within a second', async () => {
    await worker();
    const id = await submit('test-sleep', { ms: 30_000 });
    await status(id, 'running');
    const started = Date.now();
    expect((await api.request({ method: 'DELETE', url: `/v1/executions/${id}`, key: acme.key })).json().status).toBe('cancelled');
    await until('the worker to abort the tool', async () => (existsSync(path.join(api.workspaceRoot, `aborted-${id}`)) ? true : undefined), 1_000);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect((await read(id)).status).toBe('cancelled');
  });

  it('cancelling a performance-profiling run in another process stops its load within a second', async () => {
    const target = await startRecordingServer(() => ({ status: 200, body: 'ok' }));
    try {
      await worker({ EGRESS_ALLOW: '127.0.0.0/8' });
      const id = await submit('performance-profiling', { url: `${target.url}/`, connections: 4, duration_seconds: 30 });
      await until('the load to reach the target', async () => (target.received.length > 100 ? true : undefined), 20_000);
      expect((await api.request({ method: 'DELETE', url: `/v1/executions/${id}`, key: acme.key })).json().status).toBe('cancelled');
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const afterOneSecond = target.received.length;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(target.received.length - afterOneSecond).toBe(0);
      expect((await read(id)).status).toBe('cancelled');
    } finally {
      await target.close();
    }
  });

  it("a SIGKILLed worker's execution ends in a retryable error saying it may have run; a live worker logs the death and the execution", async () => {
    const beating = { RECONCILE_INTERVAL_SECONDS: '1' };
    const doomed = await worker(beating);
    const id = await submit('test-sleep', { ms: 60_000 });
    await status(id, 'running');
    await killProcess(doomed);
    const survivor = await worker(beating); // its stalled-job check finds the orphan once the dead worker's lock lapses
    await status(id, 'error', 15_000);
    expect((await read(id)).error).toMatchObject({ code: 'INTERNAL_ERROR', retryable: true, message: expect.stringMatching(/worker .* lost.*may have run/), details: { outcome_unknown: true }, suggestion: expect.stringContaining('idempotency key') });
    expect(survivor.output()).toContain(`Execution ${id} ended by the lost-worker: worker_lost`);
    await until('the dead worker reported', async () => (survivor.output().includes(`:${doomed.child.pid} stopped its heartbeat`) ? true : undefined), 10_000, 100);
  });

  it('SIGTERM lets running work finish and leaves waiting work for other workers', async () => {
    const leaving = await worker({ WORKER_CONCURRENCY: '1' });
    const running = await submit('test-sleep', { ms: 1_500 });
    await status(running, 'running');
    const waiting = await submit('test-record', {});
    leaving.child.kill('SIGTERM');
    // Nest re-raises the signal once its shutdown hooks are done.
    expect(await leaving.exited).toBe('SIGTERM');
    expect(await read(running)).toMatchObject({ status: 'success' });
    expect((await read(waiting)).status).toBe('queued');
    const stayer = await worker();
    await status(waiting, 'success');
    expect(ranBy(waiting)).toEqual([stayer.child.pid]);
  });
});

describeEachEngine('Redis outage', (mode) => {
  if (mode.name === 'embedded') return;

  let redis: RedisServer;
  let t: TestApp;
  let acme: TestAccount;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    redis = await startRedis(); // private: this suite kills it
    const prepared = await mode.prepare();
    cleanup = prepared.cleanup;
    t = await startTestApp({ env: { ...prepared.env, REDIS_URL: redis.url }, extensions: [TestToolsModule] });
    acme = await t.createAccount('acme');
  });

  afterAll(async () => {
    await t?.close();
    await redis?.stop();
    await cleanup?.();
  });

  const invokeAsync = () =>
    t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke?async=true', key: acme.key, payload: { inputs: { expression: '1', data: {} } } });

  const executions = async () => (await t.request({ method: 'GET', url: '/v1/executions', key: acme.key })).json().total as number;

  it('async invokes answer 503 (retryable) at once while Redis is down, leave no execution behind, and work again promptly when it returns', async () => {
    expect((await invokeAsync()).statusCode).toBe(202);
    await redis.kill();
    const started = Date.now();
    const down = await invokeAsync();
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(down.statusCode).toBe(503);
    expect(down.headers['retry-after']).toBe('1');
    expect(down.json().error).toMatchObject({ code: 'INTERNAL_ERROR', retryable: true, retry_after: 1 });
    // The refused call has no execution: the client was told nothing was accepted.
    expect(await executions()).toBe(1);
    expect((await t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke', key: acme.key, payload: { expression: '2', data: {} } })).statusCode).toBe(200);
    // Rate limits fail open to this process's own windows: still enforced, still on every response.
    const during = await t.request({ method: 'GET', url: '/v1/tools', key: acme.key });
    expect(during.statusCode).toBe(200);
    expect(during.headers['x-ratelimit-limit']).toBe('10000');
    const notReady = await t.request({ method: 'GET', url: '/readyz' });
    expect(notReady.statusCode).toBe(503);
    expect(notReady.json().checks).toMatchObject({ database: 'ok', queue: expect.stringMatching(/^failing/) });

    // The outage's length is what is tested: long enough for a reconnect backoff to grow (Bull's
    // default waits e^attempt ms: 8 s once Redis has been away 5 s).
    await new Promise((resolve) => setTimeout(resolve, 5_000 - (Date.now() - started)));
    expect((await invokeAsync()).statusCode).toBe(503);
    await redis.restart();
    const restarted = Date.now();
    const back = await until('async invokes to be accepted again', async () => {
      const res = await invokeAsync();
      return res.statusCode === 202 ? res : undefined;
    }, 20_000, 20);
    const recoveryMs = Date.now() - restarted;
    console.log(`async invokes accepted again ${recoveryMs} ms after Redis answered`);
    expect(recoveryMs).toBeLessThan(1_000);
    // Readiness pings Redis on a client of its own, which reconnects on its own schedule (promptly).
    await until('/readyz to answer 200', async () => ((await t.request({ method: 'GET', url: '/readyz' })).statusCode === 200 ? true : undefined), 2_000, 50);
    const id = back.json().execution_id;
    await until(`${id} to succeed`, async () => ((await t.request({ method: 'GET', url: `/v1/executions/${id}`, key: acme.key })).json().status === 'success' ? true : undefined));
  });
});

describeEachEngine('roles', (mode) => {
  if (mode.name === 'embedded') return; // api and worker roles share work through Redis

  let redis: RedisServer; // private: connections are counted on it
  let admin: Redis;
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    redis = await startRedis();
    admin = new Redis(redis.url);
    const prepared = await mode.prepare();
    cleanup = prepared.cleanup;
    env = { ...prepared.env, REDIS_URL: redis.url };
  });

  afterAll(async () => {
    admin?.disconnect();
    await redis?.stop();
    await cleanup?.();
  });

  /** The service's connections to this Redis: all but the test's own. */
  const serviceConnections = async () => {
    const own = `id=${String(await admin.client('ID'))} `;
    return ((await admin.client('LIST')) as string).split('\n').filter((line) => line.startsWith('id=') && !line.startsWith(own)).length;
  };
  const routes = (t: TestApp) => {
    const fastify = t.app.getHttpAdapter().getInstance();
    return ['/healthz', '/v1/tools', '/v1/executions', '/v1/mcp', '/v1/openapi.json', '/console'].filter((url) => fastify.hasRoute({ method: 'GET', url }));
  };

  it('a worker process serves no HTTP route; an API process consumes no queue', async () => {
    const worker = await startTestApp({ env: { ...env, ROLE: 'worker' } });
    try {
      expect(routes(worker)).toEqual([]);
      expect(worker.app.get(QueueConsumer)).toBeInstanceOf(QueueConsumer);
    } finally {
      await worker.close();
    }
    const api = await startTestApp({ env: { ...env, ROLE: 'api' } });
    try {
      expect(routes(api)).toEqual(['/healthz', '/v1/tools', '/v1/executions', '/v1/mcp', '/v1/openapi.json', '/console']);
      expect(() => api.app.get(QueueConsumer)).toThrow();
    } finally {
      await api.close();
    }
  });

  it('opens its Redis connections through one owner and closes every one at shutdown', async () => {
    const t = await startTestApp({ env });
    const account = await t.createAccount('acme');
    // Request-path commands, pub/sub and the queue: one connection each kind, Bull's three.
    expect((await t.request({ method: 'POST', url: '/v1/tools/json-transform/invoke?async=true', key: account.key, payload: { inputs: { expression: '1', data: {} } } })).statusCode).toBe(202);
    const opened = t.app.get(RedisConnections).openCount;
    expect(opened).toBeGreaterThanOrEqual(3);
    await until('the service connections to show in CLIENT LIST', async () => ((await serviceConnections()) === opened ? true : undefined));
    await t.close();
    expect(t.app.get(RedisConnections).openCount).toBe(0);
    await until('Redis to see every service connection closed', async () => ((await serviceConnections()) === 0 ? true : undefined));
  });
});
