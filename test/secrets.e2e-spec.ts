/**
 * Per-account secrets: the write-only API and its scope, tools reading the caller's own secret
 * through ctx.secrets, and — in a real service process on PostgreSQL with every log level on —
 * that a secret's value appears in no log line and no stored row, that start-up refuses secrets
 * it cannot open, and that a rotated key still opens what the old one sealed.
 */
import { execFile } from 'node:child_process';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { DataSource } from 'typeorm';
import { SecretCipher, type Sealed } from '../src/secrets/secret-cipher';
import { Client } from 'pg';
import { generateSecret } from '../src/identity/key-secret';
import { useTestApp, type TestAccount } from './support/app';
import { IsolatedTestToolsModule } from './support/isolated-tools/isolated-tools.module';
import { createTestDatabase, describeEachDatabase, postgresUrl } from './support/databases';
import { redisUrl } from './support/engines';
import Redis from 'ioredis';
import { freePort } from './support/free-port';
import { killProcess, startServiceProcess, type ServiceProcess } from './support/processes';
import { startRecordingServer, type RecordingServer } from './support/recording-server';

const newKey = () => randomBytes(32).toString('base64');

/** A webhook receiver on loopback for the suite: it records what it got; /fail answers 400, /hang never. */
function receiver() {
  let server: RecordingServer;
  beforeAll(async () => {
    server = await startRecordingServer(({ url }) => (url === '/hang' ? null : { status: url === '/fail' ? 400 : 200, body: 'ok' }));
  });
  afterAll(() => server.close());
  return { received: { at: (index: number) => server.received.at(index) }, url: () => server.url };
}

const signature = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describeEachDatabase('Account secrets API', (mode) => {
  const suite = useTestApp(mode, { extensions: [IsolatedTestToolsModule], env: { SECRETS_KEY: newKey(), EGRESS_ALLOW: '127.0.0.0/8', PROBE_TOKEN: 'operator-value' } });
  const hook = receiver();
  let other: TestAccount;
  beforeAll(async () => {
    other = await suite.t.createAccount('other');
  });

  const put = (name: string, value: unknown, key = suite.acme.key) => suite.t.request({ method: 'PUT', url: `/v1/secrets/${name}`, key, payload: { value } });
  const list = (key = suite.acme.key) => suite.t.request({ method: 'GET', url: '/v1/secrets', key });

  it('creates (201), replaces (200), lists names only, deletes (204), then 404', async () => {
    const created = await put('DEPLOY_HOOK', 'first-value-123');
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({ name: 'DEPLOY_HOOK', created_at: expect.any(String), updated_at: expect.any(String) });
    const replaced = await put('DEPLOY_HOOK', 'second-value-456');
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json().created_at).toBe(created.json().created_at);

    const listed = await list();
    expect(listed.json()).toEqual({ secrets: [{ name: 'DEPLOY_HOOK', created_at: expect.any(String), updated_at: replaced.json().updated_at }], total: 1, limit: 100 });
    expect(listed.body).not.toContain('value-');

    expect((await suite.t.request({ method: 'DELETE', url: '/v1/secrets/DEPLOY_HOOK', key: suite.acme.key })).statusCode).toBe(204);
    const again = await suite.t.request({ method: 'DELETE', url: '/v1/secrets/DEPLOY_HOOK', key: suite.acme.key });
    expect(again.statusCode).toBe(404);
    expect(again.json().error.code).toBe('NOT_FOUND');
  });

  it('refuses bad names and values without echoing the value', async () => {
    const badName = await put('has space', 'v');
    expect(badName.statusCode).toBe(400);
    expect(badName.json().error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'name' } });
    for (const value of ['', 42, 'x'.repeat(16_385)]) {
      const res = await put('OK_NAME', value);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'value' } });
      if (typeof value === 'string' && value) expect(res.body).not.toContain(value.slice(0, 100));
    }
  });

  it('needs secrets:manage, which temporary keys cannot hold', async () => {
    const readOnly = await suite.t.createKey(suite.acme.id, { name: 'ro', type: 'service', scopes: ['tools:read', 'tools:invoke'] });
    expect((await list(readOnly)).statusCode).toBe(403);
    expect((await put('X', 'value-1', readOnly)).statusCode).toBe(403);
    const temporary = await suite.t.request({ method: 'POST', url: '/v1/keys', key: suite.acme.key, payload: { name: 't', type: 'temporary', expires_in: 60, scopes: ['secrets:manage'] } });
    expect(temporary.statusCode).toBe(403);
    expect(temporary.json().error.message).toContain('secrets:manage');
  });

  it("one account never sees or uses another's secret", async () => {
    await put('SHARED_NAME', 'acme-only-value');
    expect((await list(other.key)).json().secrets).toEqual([]);
    expect((await suite.t.request({ method: 'DELETE', url: '/v1/secrets/SHARED_NAME', key: other.key })).statusCode).toBe(404);
    const call = await suite.t.request({ method: 'POST', url: '/v1/tools/webhook-trigger/invoke', key: other.key, payload: { url: `${hook.url()}/h`, payload: {}, secret_name: 'SHARED_NAME' } });
    expect(call.json()).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', retryable: false, message: "Secret 'SHARED_NAME' is not set" } });
    expect(call.json().error.suggestion).toContain('PUT /v1/secrets/SHARED_NAME');
  });

  it("gives an isolated tool (a worker thread) the caller's value of its declared secret setting, else the operator's", async () => {
    const sha = (value: string) => createHash('sha256').update(value).digest('hex');
    const probe = async (key: string) =>
      (await suite.t.request({ method: 'POST', url: '/v1/tools/test-secret-isolated/invoke', key, headers: { 'cache-control': 'no-cache' }, payload: {} })).json().result;
    expect(await probe(suite.acme.key)).toEqual({ sha256: sha('operator-value') });
    await put('PROBE_TOKEN', 'acme-own-value');
    expect(await probe(suite.acme.key)).toEqual({ sha256: sha('acme-own-value') });
    expect(await probe(other.key)).toEqual({ sha256: sha('operator-value') });
  });

  it("signs a webhook with the caller's own secret, sync and async", async () => {
    await put('SIGNING', 'whsec-acme-signing');
    const sync = await suite.t.request({ method: 'POST', url: '/v1/tools/webhook-trigger/invoke', key: suite.acme.key, payload: { url: `${hook.url()}/s`, payload: { n: 1 }, secret_name: 'SIGNING' } });
    expect(sync.json()).toMatchObject({ status: 'success', result: { signed: true, delivered: true } });
    const last = hook.received.at(-1)!;
    expect(last.headers['x-signature']).toBe(signature('whsec-acme-signing', last.body));

    const queued = await suite.t.request({ method: 'POST', url: '/v1/tools/webhook-trigger/invoke?async=true', key: suite.acme.key, payload: { url: `${hook.url()}/a`, payload: { n: 2 }, secret_name: 'SIGNING' } });
    expect(queued.statusCode).toBe(202);
    for (let i = 0; i < 100 && hook.received.at(-1)!.body !== '{"n":2}'; i++) await new Promise((r) => setTimeout(r, 50));
    const async = hook.received.at(-1)!;
    expect(async.body).toBe('{"n":2}');
    expect(async.headers['x-signature']).toBe(signature('whsec-acme-signing', async.body));

    // An inline secret of a queued call travels sealed in the job and opens for the worker.
    await suite.t.request({ method: 'POST', url: '/v1/tools/webhook-trigger/invoke?async=true', key: suite.acme.key, payload: { url: `${hook.url()}/i`, payload: { n: 3 }, secret: 'whsec-inline-queued' } });
    for (let i = 0; i < 100 && hook.received.at(-1)!.body !== '{"n":3}'; i++) await new Promise((r) => setTimeout(r, 50));
    const inline = hook.received.at(-1)!;
    expect(inline.body).toBe('{"n":3}');
    expect(inline.headers['x-signature']).toBe(signature('whsec-inline-queued', inline.body));
  });
});

describeEachDatabase('Account secrets without SECRETS_KEY', (mode) => {
  const suite = useTestApp(mode);
  const put = (value: string) => suite.t.request({ method: 'PUT', url: '/v1/secrets/ANY', key: suite.acme.key, payload: { value } });

  if (mode.name === 'pglite') {
    it('embedded: makes a key file beside the data on first use (0600), seals with it, and never replaces it', async () => {
      const keyFile = path.join(suite.env.DATA_DIR, 'secrets.key');
      expect(existsSync(keyFile)).toBe(false);
      expect((await suite.t.request({ method: 'GET', url: '/v1/secrets', key: suite.acme.key })).statusCode).toBe(200);
      expect(existsSync(keyFile)).toBe(false); // listing names needs no key
      expect((await put('first')).statusCode).toBe(201);
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      const key = readFileSync(keyFile, 'utf8').trim();
      expect((await put('second')).statusCode).toBe(200);
      expect(readFileSync(keyFile, 'utf8').trim()).toBe(key);
      // What the next start reads from the file opens what this one sealed.
      const [row] = (await suite.t.app.get(DataSource).query(`SELECT key_id, sealed FROM account_secrets WHERE name = 'ANY'`)) as Sealed[];
      expect(new SecretCipher(key).open(suite.acme.id, 'ANY', row)).toBe('second');
    });
  } else {
    it('PostgreSQL: refuses with a non-retryable 501 naming SECRETS_KEY (every process must hold the same key)', async () => {
      const res = await put('v');
      expect(res.statusCode).toBe(501);
      expect(res.json().error).toMatchObject({ code: 'INTERNAL_ERROR', retryable: false, details: { setting: 'SECRETS_KEY' }, message: expect.stringContaining('SECRETS_KEY'), suggestion: expect.stringContaining('randomBytes(32)') });
      expect(res.headers['retry-after']).toBeUndefined();
    });
  }
});

describe('Account secrets in a service process (logs, rows, key rotation)', () => {
  const hook = receiver();
  const firstKey = newKey();
  const secretValue = `whsec-${randomBytes(12).toString('hex')}`;
  const inlineValue = `inline-${randomBytes(12).toString('hex')}`;
  const headerValue = 'Bearer header-credential-7Qx2';
  const apiKey = generateSecret('service');
  const queuePrefix = `sec${randomBytes(4).toString('hex')}`;
  let database: { url: string; drop(): Promise<void> };
  /** Every key and value this service's queue holds in Redis, as one text. */
  const queueContents = async (): Promise<string> => {
    const redis = new Redis(redisUrl());
    try {
      const parts: string[] = [];
      for (const key of await redis.keys(`${queuePrefix}:*`)) {
        const type = await redis.type(key);
        if (type === 'hash') parts.push(key, JSON.stringify(await redis.hgetall(key)));
        else if (type === 'list') parts.push(key, ...(await redis.lrange(key, 0, -1)));
        else if (type === 'zset') parts.push(key, ...(await redis.zrange(key, 0, -1)));
        else if (type === 'string') parts.push(key, (await redis.get(key)) ?? '');
      }
      return parts.join('\n');
    } finally {
      redis.disconnect();
    }
  };
  let env: Record<string, string>;
  let service: ServiceProcess | undefined;
  const outputs: string[] = [];

  const start = async (extra: Record<string, string>) => {
    const port = await freePort();
    service = await startServiceProcess('all', { ...env, PORT: String(port), ...extra });
    return `http://127.0.0.1:${port}`;
  };
  const stop = async () => {
    if (service) outputs.push(service.output());
    await killProcess(service);
    service = undefined;
  };
  const call = (base: string, method: string, path: string, body?: unknown) =>
    fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(20_000) });

  beforeAll(async () => {
    database = await createTestDatabase(postgresUrl());
    env = {
      DATABASE_URL: database.url,
      // With Redis, async calls travel as Bull jobs: their payloads are checked for secrets too.
      REDIS_URL: redisUrl(),
      QUEUE_PREFIX: queuePrefix,
      BOOTSTRAP_API_KEY: apiKey,
      BOOTSTRAP_TIER: 'enterprise',
      EGRESS_ALLOW: '127.0.0.0/8',
      LOG_LEVEL: 'trace',
    };
  });
  afterAll(async () => {
    await stop();
    await database.drop();
  });

  it('keeps the value out of every log line and stored row', async () => {
    const base = await start({ SECRETS_KEY: firstKey });
    expect((await call(base, 'PUT', '/v1/secrets/HOOK', { value: secretValue })).status).toBe(201);
    const named = await call(base, 'POST', '/v1/tools/webhook-trigger/invoke', { url: `${hook.url()}/ok`, payload: { a: 1 }, secret_name: 'HOOK' });
    expect(await named.json()).toMatchObject({ status: 'success', result: { signed: true } });
    expect(hook.received.at(-1)!.headers['x-signature']).toBe(signature(secretValue, hook.received.at(-1)!.body));
    // An inline secret, a failed delivery and a refused one: each writes logs and an execution row.
    await call(base, 'POST', '/v1/tools/webhook-trigger/invoke', { url: `${hook.url()}/fail`, payload: { b: 2 }, secret: inlineValue, headers: { Authorization: headerValue } });
    expect(hook.received.at(-1)!.headers.authorization).toBe(headerValue); // the tool sent the real value
    await call(base, 'POST', '/v1/tools/webhook-trigger/invoke?async=true', { url: 'http://10.0.0.1/', payload: {}, secret: inlineValue });
    await call(base, 'PUT', '/v1/secrets/bad name', { value: secretValue });
    // A queued call whose delivery hangs: its job sits in the queue while the inline secret is in use.
    const hanging = await call(base, 'POST', '/v1/tools/webhook-trigger/invoke?async=true', { url: `${hook.url()}/hang`, payload: { c: 3 }, secret: inlineValue, headers: { Authorization: headerValue }, max_attempts: 1, timeout_ms: 2000 });
    expect(hanging.status).toBe(202);
    await new Promise((r) => setTimeout(r, 500));
    const queued = await queueContents();
    expect(queued).toContain(((await hanging.json()) as { execution_id: string }).execution_id); // the job is there…
    expect(queued).not.toContain(inlineValue); // …without the secret in clear
    expect(queued).not.toContain(headerValue); // …or the credential header
    await new Promise((r) => setTimeout(r, 2000));
    await stop();
    for (const value of [inlineValue, headerValue]) expect(await queueContents()).not.toContain(value); // failed jobs are kept

    const logs = outputs.join('\n');
    expect(logs.length).toBeGreaterThan(1000); // trace logging really ran
    for (const value of [secretValue, inlineValue, headerValue]) expect(logs).not.toContain(value);

    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      const tables = (await client.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).rows.map((row) => row.tablename as string);
      expect(tables).toEqual(expect.arrayContaining(['account_secrets', 'executions', 'api_keys']));
      let rows = 0;
      for (const table of tables) {
        for (const row of (await client.query(`SELECT t::text AS text FROM "${table}" t`)).rows) {
          rows++;
          for (const value of [secretValue, inlineValue, headerValue]) expect({ table, row: row.text.includes(value) }).toEqual({ table, row: false });
        }
      }
      expect(rows).toBeGreaterThan(5);
    } finally {
      await client.end();
    }
  });

  it('refuses to start without the key that sealed the stored secrets, naming SECRETS_KEY; operator commands that do not open them still run', async () => {
    await expect(start({ SECRETS_KEY: '' })).rejects.toThrow(/SECRETS_KEY is not set/);
    await expect(start({ SECRETS_KEY: newKey() })).rejects.toThrow(/SECRETS_PREVIOUS_KEYS/);
    const cli = path.join(__dirname, '..', 'src', 'cli', 'main.ts');
    const listed = await promisify(execFile)(process.execPath, ['-r', 'ts-node/register/transpile-only', cli, 'accounts', 'list'], {
      env: { ...process.env, NODE_OPTIONS: '', DATABASE_URL: database.url, SECRETS_KEY: '' },
      timeout: 60_000,
    });
    expect(listed.stderr).not.toMatch(/SECRETS_KEY/); // exit 0: execFile rejects otherwise
  }, 90_000);

  it('opens secrets sealed with a previous key after rotation', async () => {
    const base = await start({ SECRETS_KEY: newKey(), SECRETS_PREVIOUS_KEYS: firstKey });
    const named = await call(base, 'POST', '/v1/tools/webhook-trigger/invoke', { url: `${hook.url()}/rotated`, payload: { c: 3 }, secret_name: 'HOOK' });
    expect(await named.json()).toMatchObject({ status: 'success', result: { signed: true } });
    expect(hook.received.at(-1)!.headers['x-signature']).toBe(signature(secretValue, hook.received.at(-1)!.body));
    await stop();
  });
});
