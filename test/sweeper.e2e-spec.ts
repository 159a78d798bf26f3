/**
 * Every accepted execution reaches a terminal state: when the database fails under a running
 * execution, so that its process cannot write its end, the sweeper ends it once its deadline
 * (timeout plus grace) has passed; a queued execution no worker takes in QUEUE_MAX_WAIT_SECONDS
 * ends too; and the embedded restart re-queues with the timeout the request asked for.
 */
import { generateSecret } from '../src/identity/key-secret';
import { useTestApp } from './support/app';
import { asAdmin, createTestDatabase, DATABASE_MODES, postgresUrl } from './support/databases';
import { freePort } from './support/free-port';
import { until } from './support/poll';
import { killProcess, startServiceProcess, type ServiceProcess } from './support/processes';
import { TestToolsModule } from './support/test-tools.module';

const apiKey = generateSecret('service');
const http = (base: string) => async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, any> };
};

describe('The sweeper, when PostgreSQL fails under running executions', () => {
  let database: { url: string; drop(): Promise<void> };
  let service: ServiceProcess | undefined;
  let call: ReturnType<typeof http>;
  let name: string;

  /** As the server's superuser: what the database does to the service's connections. */
  /** The database goes away for the service: its sessions are cut and new ones refused. */
  const databaseDown = async () => {
    await asAdmin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
    await asAdmin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`);
  };
  const databaseUp = () => asAdmin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);

  beforeAll(async () => {
    database = await createTestDatabase(postgresUrl());
    name = new URL(database.url).pathname.slice(1);
    const port = await freePort();
    service = await startServiceProcess('all', {
      DATABASE_URL: database.url,
      BOOTSTRAP_API_KEY: apiKey,
      BOOTSTRAP_TIER: 'enterprise',
      PORT: String(port),
      SWEEP_INTERVAL_SECONDS: '1',
      SWEEP_GRACE_SECONDS: '1',
    });
    call = http(`http://127.0.0.1:${port}`);
  });
  afterAll(async () => {
    await databaseUp().catch(() => undefined);
    await killProcess(service);
    await database.drop();
  });

  it("ends a sync execution whose end could not be written after its deadline, as outcome unknown; an async one's end is written once the database is back", async () => {
    const queued = await call('POST', '/v1/tools/test-sleep/invoke?async=true&timeout=3', { ms: 1500 });
    expect(queued.status).toBe(202);
    const asyncId = queued.body.execution_id as string;
    const sync = call('POST', '/v1/tools/test-sleep/invoke?timeout=3', { ms: 1500 });
    const running = await until('both executions running', async () => {
      const list = await call('GET', '/v1/executions?status=running&limit=10');
      return list.body.executions?.length === 2 ? (list.body.executions as { id: string }[]) : undefined;
    });
    const syncId = running.map((e) => e.id).find((id) => id !== asyncId)!;

    await databaseDown();
    // Both tools finish (1.5 s) while the database is away: neither end can be written then. The
    // sync caller still gets the outcome of the tool that ran.
    const syncAnswer = await sync;
    expect(syncAnswer).toMatchObject({ status: 200, body: { status: 'success', result: { slept_ms: 1500 } } });
    await databaseUp();

    const final = (id: string) =>
      until(`${id} to end`, async () => {
        const got = await call('GET', `/v1/executions/${id}`);
        return got.status === 200 && got.body.status !== 'running' ? got.body : undefined;
      }, 20_000, 250);
    // Its worker kept trying the write (backing off) while holding the job: the true outcome.
    expect(await final(asyncId)).toMatchObject({ status: 'success', result: { slept_ms: 1500 } });
    // The sync caller has its answer; its row is the sweeper's, which cannot know what happened.
    const ended = await final(syncId);
    expect(ended).toMatchObject({ status: 'error', error: { code: 'INTERNAL_ERROR', retryable: true, message: expect.stringContaining('may have run'), details: { outcome_unknown: true } } });
    // Not before its deadline: started + timeout (3 s) + grace (1 s).
    expect(Date.parse(ended.completed_at) - Date.parse(ended.started_at)).toBeGreaterThanOrEqual(4000);
    expect(service!.output()).toMatch(new RegExp(`Execution ${syncId} ended by the sweeper: overdue_running`));
  });
});

describe('The sweeper and the queue', () => {
  const suite = useTestApp(DATABASE_MODES[0], {
    extensions: [TestToolsModule],
    env: { WORKER_CONCURRENCY: '1', SWEEP_INTERVAL_SECONDS: '1', QUEUE_MAX_WAIT_SECONDS: '1' },
  });
  const submit = (ms: number) => suite.t.request({ method: 'POST', url: '/v1/tools/test-sleep/invoke?async=true', key: suite.acme.key, payload: { ms } });
  const read = async (id: string) => (await suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key: suite.acme.key })).json();

  it('ends an execution no worker took within QUEUE_MAX_WAIT_SECONDS, and the worker does not run it later', async () => {
    const busy = (await submit(3500)).json().execution_id;
    const waiting = (await submit(10)).json().execution_id;
    const ended = await until('the waiting execution ended', async () => {
      const got = await read(waiting);
      return got.status === 'error' ? got : undefined;
    }, 10_000, 100);
    expect(ended).toMatchObject({ status: 'error', started_at: null, error: { code: 'INTERNAL_ERROR', retryable: true, message: expect.stringContaining('QUEUE_MAX_WAIT_SECONDS') } });
    await until('the busy one finished', async () => ((await read(busy)).status === 'success' ? true : undefined), 10_000, 100);
    await new Promise((r) => setTimeout(r, 300));
    expect(await read(waiting)).toMatchObject({ status: 'error', started_at: null });
  });
});

describe('The embedded restart', () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  let service: ServiceProcess | undefined;
  beforeAll(async () => {
    const prepared = await DATABASE_MODES[0].prepare();
    cleanup = prepared.cleanup;
    env = { ...prepared.env, BOOTSTRAP_API_KEY: apiKey, BOOTSTRAP_TIER: 'enterprise', WORKER_CONCURRENCY: '1' };
  });
  afterAll(async () => {
    await killProcess(service);
    await cleanup();
  });

  it('queues a waiting execution again with the timeout its request asked for', async () => {
    let port = await freePort();
    service = await startServiceProcess('all', { ...env, PORT: String(port) });
    let call = http(`http://127.0.0.1:${port}`);
    const busy = (await call('POST', '/v1/tools/test-sleep/invoke?async=true', { ms: 20_000 })).body.execution_id;
    // Asks for 1 s; test-sleep's own timeout is 30 s, and it sleeps 3 s.
    const waiting = (await call('POST', '/v1/tools/test-sleep/invoke?async=true&timeout=1', { ms: 3000 })).body.execution_id;
    await until('the first one running', async () => ((await call('GET', `/v1/executions/${busy}`)).body.status === 'running' ? true : undefined));
    await killProcess(service);

    port = await freePort();
    service = await startServiceProcess('all', { ...env, PORT: String(port) });
    call = http(`http://127.0.0.1:${port}`);
    const ended = await until('the re-queued execution ended', async () => {
      const got = (await call('GET', `/v1/executions/${waiting}`)).body;
      return got.status === 'queued' || got.status === 'running' ? undefined : got;
    }, 20_000, 100);
    expect(ended).toMatchObject({ status: 'error', error: { code: 'TOOL_TIMEOUT' } });
    expect((await call('GET', `/v1/executions/${busy}`)).body).toMatchObject({ status: 'error', error: { retryable: true } });
  });
});
