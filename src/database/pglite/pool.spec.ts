import { execFile } from 'node:child_process';
import type { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { createPgliteDriver, type PgliteDriver } from './index';

/** The part of the `pg` module surface these tests drive (what TypeORM calls). */
interface Result {
  command: string | null;
  rowCount: number | null;
  rows: Record<string, unknown>[];
}
type Callback = (error: (Error & { code?: string }) | null, result?: Result) => void;
interface Client {
  query(text: string, values?: unknown[]): Promise<Result>;
  query(text: string, callback: Callback): void;
  query(text: string, values: unknown[], callback: Callback): void;
  release(error?: unknown): void;
}
interface Pool extends EventEmitter {
  connect(): Promise<Client>;
  connect(callback: (error: Error | undefined, client?: Client, release?: () => void) => void): void;
  end(): Promise<void>;
  end(callback: (error?: Error) => void): void;
}

// Opening PGlite (WASM start, initdb on a fresh directory) takes seconds on a loaded machine.
jest.setTimeout(30_000);

const poolOf = (driver: PgliteDriver, options?: object): Pool =>
  new (driver.pg as { Pool: new (options?: object) => Pool }).Pool(options);

describe('PGlite pg-module driver', () => {
  let root: string;
  let dataDir: string;
  let driver: PgliteDriver;
  let pool: Pool;

  const count = async (client: Client): Promise<number> =>
    (await client.query('SELECT count(*)::int AS n FROM items')).rows[0].n as number;

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'pglite-pool-'));
    dataDir = path.join(root, 'nested', 'data');
    driver = createPgliteDriver(dataDir);
    pool = poolOf(driver, { database: 'postgres' });
    expect(existsSync(dataDir)).toBe(false); // nothing happens before the first connect
    const client = await pool.connect();
    await client.query('CREATE TABLE items (id int PRIMARY KEY)');
    client.release();
  });
  beforeEach(async () => {
    const client = await pool.connect();
    await client.query('DELETE FROM items');
    client.release();
  });
  afterAll(async () => {
    try {
      await driver?.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('creates the data directory on first connect, serving the postgres database', async () => {
    expect(existsSync(path.join(dataDir, 'PG_VERSION'))).toBe(true);
    const client = await pool.connect();
    expect((await client.query('SELECT current_database() AS db')).rows).toEqual([{ db: 'postgres' }]);
    client.release();
  });

  it('answers in the promise and callback forms of pg', async () => {
    const client = await new Promise<Client>((resolve, reject) =>
      pool.connect((error, c) => (error ? reject(error) : resolve(c!))),
    );
    const viaCallback = (text: string, values?: unknown[]) =>
      new Promise<Result>((resolve, reject) => {
        const done: Callback = (error, result) => (error ? reject(error) : resolve(result!));
        if (values) client.query(text, values, done);
        else client.query(text, done);
      });
    expect((await client.query('SELECT $1::int AS v', [1])).rows).toEqual([{ v: 1 }]);
    expect((await client.query('SELECT 2 AS v')).rows).toEqual([{ v: 2 }]);
    expect((await viaCallback('SELECT $1::int AS v', [3])).rows).toEqual([{ v: 3 }]);
    expect((await viaCallback('SELECT 4 AS v')).rows).toEqual([{ v: 4 }]);
    await expect(viaCallback('SELECT no_such_column')).rejects.toMatchObject({ code: '42703' });
    await expect(client.query({ text: 'SELECT 1' } as unknown as string)).rejects.toThrow(/only SQL text/);
    client.release();
  });

  it('grants the session to one client at a time, in FIFO order', async () => {
    const first = await pool.connect();
    const granted: number[] = [];
    const waiting = [1, 2, 3].map((n) => pool.connect().then((client) => (granted.push(n), client)));
    await first.query('SELECT 1'); // a full round trip later, still nobody else got in
    expect(granted).toEqual([]);
    first.release();
    for (const [i, next] of waiting.entries()) {
      const client = await next;
      await client.query('SELECT 1');
      expect(granted).toEqual([1, 2, 3].slice(0, i + 1));
      client.release();
    }
  });

  it.each([
    ['BEGIN', ['BEGIN']],
    ['START TRANSACTION', ['START TRANSACTION ISOLATION LEVEL REPEATABLE READ']],
    ['a savepoint', ['BEGIN', 'SAVEPOINT s1']],
  ])('rolls back a transaction (%s) that a client leaves open at release', async (_name, begin) => {
    const holder = await pool.connect();
    for (const statement of begin) await holder.query(statement);
    await holder.query('INSERT INTO items VALUES (1)');
    holder.release();

    const next = await pool.connect();
    expect(await count(next)).toBe(0); // still inside the transaction, it would see its own row
    next.release();
  });

  it('rolls back a transaction aborted by an error, so the next client is usable', async () => {
    const holder = await pool.connect();
    await holder.query('BEGIN');
    await holder.query('INSERT INTO items VALUES (1)');
    await expect(holder.query('INSERT INTO items VALUES (1)')).rejects.toMatchObject({ code: '23505' });
    holder.release();

    const next = await pool.connect();
    expect(await count(next)).toBe(0);
    next.release();
  });

  it.each(['COMMIT', 'END'])('keeps what a client committed with %s', async (commit) => {
    const holder = await pool.connect();
    await holder.query('BEGIN');
    await holder.query('INSERT INTO items VALUES (1)');
    await holder.query(commit);
    holder.release();

    const next = await pool.connect();
    expect(await count(next)).toBe(1);
    next.release();
  });

  it('does not wedge when a client is released with an error: its transaction is rolled back', async () => {
    const holder = await pool.connect();
    await holder.query('BEGIN');
    await holder.query('INSERT INTO items VALUES (1)');
    holder.release(new Error('connection state unknown'));

    const next = await pool.connect();
    expect(await count(next)).toBe(0);
    next.release();
  });

  it('runs queries issued before release first, and refuses the client afterwards', async () => {
    const holder = await pool.connect();
    const issued = holder.query('INSERT INTO items VALUES (1)');
    holder.release();
    await expect(holder.query('SELECT 1')).rejects.toThrow(/already released/);
    expect(() => holder.release()).toThrow(/already been released/);

    const next = await pool.connect();
    expect(await count(next)).toBe(1);
    await expect(issued).resolves.toMatchObject({ command: 'INSERT', rowCount: 1 });
    next.release();
  });

  it('refuses to serve a database other than postgres', () => {
    expect(() => poolOf(driver, { database: 'app' })).toThrow(/only the "postgres" database, not "app"/);
  });
});

describe('PGlite pg-module driver shutdown', () => {
  let root: string;
  beforeAll(() => (root = mkdtempSync(path.join(tmpdir(), 'pglite-end-'))));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('ends once: refuses queued and later clients, lets issued queries finish, then closes', async () => {
    const driver = createPgliteDriver(path.join(root, 'data'));
    const pool = poolOf(driver);
    const holder = await pool.connect();
    await holder.query('CREATE TABLE t (x int)');
    const queued = expect(pool.connect()).rejects.toThrow(/is closed/);
    const issued = holder.query('INSERT INTO t SELECT generate_series(1, 1000)');
    await pool.end();

    await queued;
    await expect(issued).resolves.toMatchObject({ command: 'INSERT', rowCount: 1000 });
    await expect(pool.connect()).rejects.toThrow(/is closed/);
    await expect(holder.query('SELECT 1')).rejects.toThrow(/is closed/); // a leaked client cannot hang shutdown
    holder.release();
    await expect(driver.close()).resolves.toBeUndefined();
    await expect(new Promise((resolve) => poolOf(driver).end(resolve))).resolves.toBeUndefined();
  });

  it('does not keep the process alive once idle, even if never closed', async () => {
    const script = `
      const { Pool } = require(${JSON.stringify(path.join(__dirname, 'index'))}).createPgliteDriver(process.argv[1]).pg;
      new Pool().connect().then(async (client) => {
        console.log((await client.query('SELECT 1 AS v')).rows[0].v);
        client.release();
      });`;
    const args = ['-r', 'ts-node/register/transpile-only', '-e', script, path.join(root, 'left-open')];
    // killed (and failed) if the process does not exit by itself
    const run = promisify(execFile)(process.execPath, args, { timeout: 25_000 });
    await expect(run).resolves.toMatchObject({ stdout: '1\n' });
  });

  it('reports an unusable data directory at every connect without wedging the queue', async () => {
    const file = path.join(root, 'not-a-directory');
    writeFileSync(file, '');
    const pool = poolOf(createPgliteDriver(path.join(file, 'data')));
    await expect(pool.connect()).rejects.toMatchObject({ code: 'ENOTDIR' });
    await expect(pool.connect()).rejects.toMatchObject({ code: 'ENOTDIR' });
    await pool.end();
  });
});
