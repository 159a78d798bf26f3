/**
 * Outages answered truthfully (docs/API.md#errors): while PostgreSQL refuses the service, requests answer
 * 503 (retryable, Retry-After), never 500, and leave no execution row the client never hears of;
 * a sync call whose tool ran anyway says its record could not be written. Start-up warns about a
 * Redis that would lose the queue in a restart. SIGTERM drains a process serving HTTP.
 */
import Redis from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { AppConfig } from '../src/config/app-config';
import { RedisConnections } from '../src/redis/redis-connections';
import { generateSecret } from '../src/identity/key-secret';
import { startTestApp, type TestAccount, type TestApp } from './support/app';
import { asAdmin, createTestDatabase, postgresUrl, type TestDatabase } from './support/databases';
import { freePort } from './support/free-port';
import { until } from './support/poll';
import { killProcess, startServiceProcess, type ServiceProcess } from './support/processes';
import { startRedis, type RedisServer } from './support/redis-server';
import { TestToolsModule } from './support/test-tools.module';

const nameOf = (database: TestDatabase) => new URL(database.url).pathname.slice(1);
/** The database goes away for the service: its sessions are cut and new ones refused. */
const databaseDown = async (database: TestDatabase) => {
  await asAdmin(`ALTER DATABASE "${nameOf(database)}" ALLOW_CONNECTIONS false`);
  await asAdmin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${nameOf(database)}' AND pid <> pg_backend_pid()`);
};
const databaseUp = (database: TestDatabase) => asAdmin(`ALTER DATABASE "${nameOf(database)}" ALLOW_CONNECTIONS true`);
describe('A PostgreSQL outage', () => {
  let database: TestDatabase;
  let t: TestApp;
  let acme: TestAccount;

  beforeAll(async () => {
    database = await createTestDatabase(postgresUrl());
    t = await startTestApp({ env: { DATABASE_URL: database.url }, extensions: [TestToolsModule] });
    acme = await t.createAccount('acme');
  });
  afterAll(async () => {
    await databaseUp(database).catch(() => undefined);
    await t?.close();
    await database?.drop();
  });

  const invoke = (query: string, payload: object) => t.request({ method: 'POST', url: `/v1/tools/test-sleep/invoke${query}`, key: acme.key, payload });

  it('answers 503 with Retry-After, never 500; leaves no row; a sync call that ran says its record is missing', async () => {
    expect((await invoke('', { ms: 1 })).statusCode).toBe(200); // the key is known and cached before the outage
    await databaseDown(database);

    const refused = await invoke('?async=true', { ms: 1 });
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('2');
    expect(refused.json().error).toMatchObject({ code: 'INTERNAL_ERROR', retryable: true, retry_after: 2, details: { unavailable: 'database' } });

    // One that ends before its row is written (one write), one that runs past it (two writes).
    for (const ms of [1, 200]) {
      const ran = await invoke('', { ms });
      expect(ran.statusCode).toBe(200);
      expect(ran.json()).toMatchObject({ status: 'success', result: { slept_ms: ms }, recorded: false, warning: expect.stringContaining('could not be written') });
    }

    const reads = await t.request({ method: 'GET', url: '/v1/executions', key: acme.key });
    expect(reads.statusCode).toBe(503);
    expect(reads.headers['retry-after']).toBe('2');

    // MCP says the same: a sync call's answer (its _meta) that it was not recorded; a read refused as an outage, not as a bug.
    const mcp = async (method: string, params: object) =>
      (await t.request({ method: 'POST', url: '/v1/mcp', key: acme.key, headers: { accept: 'application/json, text/event-stream' }, payload: { jsonrpc: '2.0', id: 1, method, params } })).json();
    expect((await mcp('tools/call', { name: 'test-sleep', arguments: { ms: 1 } })).result).toMatchObject({ structuredContent: { slept_ms: 1 }, _meta: { recorded: false } });
    expect((await mcp('tasks/list', {})).error).toMatchObject({ message: expect.stringContaining('database is unavailable'), data: { error: { retryable: true, details: { unavailable: 'database' } } } });

    await databaseUp(database);
    // Only the call made before the outage has a row.
    expect(await asAdmin('SELECT status FROM executions', database.url)).toEqual([{ status: 'success' }]);
    const after = await invoke('', { ms: 1 });
    expect(after.statusCode).toBe(200);
    expect(after.json().recorded).toBeUndefined();
  });

  it('answers a call that ran under X-Idempotency-Key with its outcome when the database goes away meanwhile, not 503', async () => {
    const call = t.request({ method: 'POST', url: '/v1/tools/test-sleep/invoke', key: acme.key, headers: { 'x-idempotency-key': 'outage-1' }, payload: { ms: 800 } });
    await until('the call to be running', async () => ((await asAdmin("SELECT 1 FROM executions WHERE status = 'running'", database.url)).length ? true : undefined));
    await databaseDown(database);
    const answer = await call;
    await databaseUp(database);
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ status: 'success', result: { slept_ms: 800 }, recorded: false });
  });
});

describe('A PostgreSQL outage, in the logs of a service process', () => {
  const apiKey = generateSecret('service');
  let database: TestDatabase;
  let service: ServiceProcess | undefined;
  afterAll(async () => {
    await killProcess(service);
    await databaseUp(database).catch(() => undefined);
    await database?.drop();
  });

  it('is one line when it starts and one when it ends, not a stack per request', async () => {
    database = await createTestDatabase(postgresUrl());
    const port = await freePort();
    service = await startServiceProcess('all', { DATABASE_URL: database.url, PORT: String(port), BOOTSTRAP_API_KEY: apiKey, BOOTSTRAP_TIER: 'enterprise' });
    const call = (url: string, body?: object) =>
      fetch(`http://127.0.0.1:${port}${url}`, { method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
    expect((await call('/v1/executions')).status).toBe(200);

    await databaseDown(database);
    const before = service.output().length;
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? call('/v1/executions') : call('/v1/tools/test-sleep/invoke?async=true', { ms: 1 }))));
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(503));
    await databaseUp(database);
    await until('the service to log that the database is back', async () => (service!.output().includes('database reachable again') ? true : undefined), 10_000, 100);

    const lines = service.output().slice(before).split('\n').filter((line) => line && !line.includes('"msg":"request"'));
    expect(lines).toEqual([expect.stringContaining('database unreachable'), expect.stringMatching(/database reachable again after [\d.]+ s; 40 requests were refused/)]);
  });
});

describe('Redis persistence, checked at start-up', () => {
  let redis: RedisServer;
  beforeAll(async () => (redis = await startRedis()));
  afterAll(() => redis?.stop());
  /** What start-up asks of the service's Redis connections (src/service.ts). */
  const persistenceWarning = async (url: string) => {
    const connections = new RedisConnections({ REDIS_URL: url, QUEUE_PREFIX: 'tos' } as AppConfig);
    try {
      return await connections.persistenceWarning();
    } finally {
      await connections.onApplicationShutdown();
    }
  };

  it('warns when a Redis restart would lose queued executions, and not once appendonly is on', async () => {
    const client = new Redis(redis.url);
    try {
      expect(await persistenceWarning(redis.url)).toMatch(/^Redis has no persistence .*a restart loses every queued execution; set appendonly yes/);
      await client.config('SET', 'save', '3600 1');
      expect(await persistenceWarning(redis.url)).toMatch(/^Redis persists by snapshot only \(save "3600 1", appendonly no\)/);
      await client.config('SET', 'appendonly', 'yes');
      expect(await persistenceWarning(redis.url)).toBeNull();
    } finally {
      client.disconnect();
    }
  });
});

describe('SIGTERM to a process serving HTTP', () => {
  const apiKey = generateSecret('service');
  let dataDir: string;
  let service: ServiceProcess | undefined;
  afterAll(async () => {
    await killProcess(service);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('stops accepting, answers the request it holds with its real outcome, then exits', async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'tos-drain-'));
    const port = await freePort();
    service = await startServiceProcess('all', { DATA_DIR: dataDir, PORT: String(port), BOOTSTRAP_API_KEY: apiKey, BOOTSTRAP_TIER: 'enterprise', SHUTDOWN_GRACE_SECONDS: '10' });
    const call = (method: string, url: string, body?: object) =>
      fetch(`http://127.0.0.1:${port}${url}`, { method, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });

    const held = call('POST', '/v1/tools/test-sleep/invoke', { ms: 1500 });
    await until('the sync call to be running', async () => (((await (await call('GET', '/v1/executions?status=running')).json()) as { total: number }).total === 1 ? true : undefined));
    service.child.kill('SIGTERM');
    // New connections are refused while the held request still runs (a fresh socket each time: a kept-alive one is closed, not refused).
    const connecting = () =>
      new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => resolve(void socket.destroy()));
        socket.once('error', resolve);
      });
    // A connect that raced the close may be accepted and then reset (ECONNRESET): refusal is what follows.
    const refused = async () => ((await connecting())?.code === 'ECONNREFUSED' ? true : undefined);
    await until('new connections to be refused', refused);
    const answer = await held;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ status: 'success', result: { slept_ms: 1500 } });
    expect(await service.exited).toBe('SIGTERM');
  });
});
