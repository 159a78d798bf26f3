import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Column, DataSource, Entity, PrimaryGeneratedColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { createPgliteDriver } from './index';

// Opening PGlite (WASM start, initdb on a fresh directory) takes seconds on a loaded machine.
jest.setTimeout(30_000);

@Entity({ name: 'notes' })
class Note {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ type: 'text' })
  title!: string;

  @Column({ type: 'text', array: true, default: () => `'{}'` })
  tags!: string[];

  @Column({ type: 'jsonb', nullable: true })
  meta!: Record<string, unknown> | null;

  @Column({ type: 'bigint', default: 0 })
  views!: string;

  @Column({ type: 'timestamptz', name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}

class CreateNotes1700000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "notes" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "title" text NOT NULL,
        "tags" text array NOT NULL DEFAULT '{}',
        "meta" jsonb,
        "views" bigint NOT NULL DEFAULT 0,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "pk_notes" PRIMARY KEY ("id")
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "notes"`);
  }
}

/** The exact way the app builds its embedded DataSource. */
const openDataSource = (dataDir: string): Promise<DataSource> =>
  new DataSource({
    type: 'postgres',
    driver: createPgliteDriver(dataDir).pg,
    database: 'postgres',
    entities: [Note],
    migrations: [CreateNotes1700000000000],
    synchronize: false,
    uuidExtension: 'pgcrypto',
  }).initialize();

describe('TypeORM on the PGlite driver', () => {
  let dataDir: string;
  let dataSource: DataSource;
  const notes = () => dataSource.getRepository(Note);

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'pglite-typeorm-'));
    dataSource = await openDataSource(dataDir);
  });
  afterAll(async () => {
    try {
      if (dataSource?.isInitialized) await dataSource.destroy();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('runs the migrations once', async () => {
    expect((await dataSource.runMigrations()).map((m) => m.name)).toEqual(['CreateNotes1700000000000']);
    expect(await dataSource.runMigrations()).toEqual([]);
  });

  it('creates, reads, updates and deletes entities with their types intact', async () => {
    const saved = await notes().save(notes().create({ title: 'first', tags: ['a', 'b'], meta: { n: 1 } }));
    expect(saved.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    const found = await notes().findOneByOrFail({ id: saved.id });
    expect(found).toEqual({
      id: saved.id,
      title: 'first',
      tags: ['a', 'b'],
      meta: { n: 1 },
      views: '0', // bigint stays a string, as on pg
      createdAt: expect.any(Date),
    });

    const renamed = await notes().update({ id: saved.id }, { title: 'renamed', views: '9007199254740993' });
    expect(renamed).toMatchObject({ affected: 1 });
    expect(await notes().findOneByOrFail({ id: saved.id })).toMatchObject({ title: 'renamed', views: '9007199254740993' });
    expect(await notes().increment({ id: saved.id }, 'views', 1)).toMatchObject({ affected: 1 });

    expect(await notes().delete({ id: saved.id })).toMatchObject({ affected: 1 });
    expect(await notes().delete({ id: saved.id })).toMatchObject({ affected: 0 });
  });

  it('returns [rows, affected] for raw UPDATE and DELETE, as on pg', async () => {
    await notes().save([{ title: 'x' }, { title: 'y' }]);
    const updated = await dataSource.query(`UPDATE notes SET title = 'z' RETURNING title`);
    expect(updated).toEqual([[{ title: 'z' }, { title: 'z' }], 2]);
    expect(await dataSource.query(`DELETE FROM notes`)).toEqual([[], 2]);
  });

  it('commits dataSource.transaction and rolls it back when the callback throws', async () => {
    await dataSource.transaction((manager) => manager.save(Note, { title: 'kept' }));
    await expect(
      dataSource.transaction(async (manager) => {
        await manager.save(Note, { title: 'lost' });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect((await notes().find()).map((n) => n.title)).toEqual(['kept']);
  });

  it('rolls back a query runner transaction', async () => {
    const queryRunner = dataSource.createQueryRunner();
    await queryRunner.startTransaction();
    await queryRunner.manager.save(Note, { title: 'uncommitted' });
    expect(await queryRunner.manager.countBy(Note, { title: 'uncommitted' })).toBe(1);
    await queryRunner.rollbackTransaction();
    await queryRunner.release();
    expect(await notes().countBy({ title: 'uncommitted' })).toBe(0);
  });

  it('keeps the data after destroy and reopen of the same directory', async () => {
    await dataSource.destroy();
    dataSource = await openDataSource(dataDir);
    expect(await dataSource.showMigrations()).toBe(false);
    expect((await notes().find()).map((n) => n.title)).toEqual(['kept']);
  });
});
