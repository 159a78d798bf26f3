/**
 * Transaction isolation, proved the same way on embedded PGlite (our driver) and on PostgreSQL.
 * A driver that shares one session between connections (as the published typeorm-pglite does)
 * fails all three: reads interleave, a reader sees uncommitted rows, a ROLLBACK undoes others' work.
 */
import { DataSource, type EntityManager } from 'typeorm';
import { createPgliteDriver } from '../src/database/pglite';
import { describeEachDatabase } from './support/databases';

/** Raw-SQL DataSource on the prepared backend: PGlite through our driver, or plain TypeORM on PostgreSQL. */
function dataSourceFor(env: Record<string, string>): DataSource {
  return new DataSource(
    env.DATABASE_URL
      ? { type: 'postgres', url: env.DATABASE_URL, poolSize: 20 }
      : { type: 'postgres', driver: createPgliteDriver(env.DATA_DIR).pg, database: 'postgres' },
  );
}

const countNotes = async (manager: EntityManager): Promise<number> =>
  (await manager.query('SELECT count(*)::int AS n FROM notes'))[0].n;

describeEachDatabase('database isolation', (mode) => {
  let dataSource: DataSource | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  const db = () => dataSource!;

  beforeAll(async () => {
    const prepared = await mode.prepare();
    cleanup = prepared.cleanup;
    dataSource = await dataSourceFor(prepared.env).initialize();
    await db().query('CREATE TABLE counter (id int PRIMARY KEY, value int NOT NULL)');
    await db().query('CREATE TABLE notes (body text NOT NULL)');
  });
  beforeEach(async () => {
    await db().query('TRUNCATE counter, notes');
    await db().query('INSERT INTO counter VALUES (1, 0)');
  });
  afterAll(async () => {
    try {
      await dataSource?.destroy();
    } finally {
      await cleanup?.();
    }
  });

  it('(a) serialises 10 concurrent SELECT ... FOR UPDATE increments: each sees the one before, total 10', async () => {
    const seen: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, () =>
        db().transaction(async (manager) => {
          const [{ value }] = await manager.query('SELECT value FROM counter WHERE id = 1 FOR UPDATE');
          seen.push(value);
          await manager.query('UPDATE counter SET value = value + 1 WHERE id = 1');
        }),
      ),
    );
    expect(seen.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await db().query('SELECT value FROM counter WHERE id = 1')).toEqual([{ value: 10 }]);
  });

  it('(b) never shows a rolled-back insert: not to a reader on another connection while open, not afterwards', async () => {
    const writer = db().createQueryRunner();
    await writer.startTransaction();
    await writer.query(`INSERT INTO notes VALUES ('uncommitted')`);

    // Issued while the transaction is open: PostgreSQL answers at once; PGlite queues it until the
    // writer releases the session. Either way it must not see the row. The writer's own read gives
    // it a full round trip to get in first (on a shared session it would run inside the transaction).
    const concurrentRead = countNotes(db().manager);
    expect(await countNotes(writer.manager)).toBe(1);
    await writer.rollbackTransaction();
    await writer.release();

    expect(await concurrentRead).toBe(0);
    expect(await countNotes(db().manager)).toBe(0);
  });

  it('(c) after a failed statement and a rollback, the next connection works normally', async () => {
    const runner = db().createQueryRunner();
    await runner.startTransaction();
    await runner.query(`INSERT INTO notes VALUES ('doomed')`);
    await expect(runner.query('SELECT * FROM no_such_table')).rejects.toThrow(/no_such_table/);
    await runner.rollbackTransaction();
    await runner.release();

    await db().transaction((manager) => manager.query(`INSERT INTO notes VALUES ('next')`));
    expect(await db().query('SELECT body FROM notes')).toEqual([{ body: 'next' }]);
  });
});
