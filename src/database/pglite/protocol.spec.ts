import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { PgliteBackend } from './backend';
import { decodeResponse, encodeQuery, type Exchange, type QueryResult } from './protocol';

// Opening PGlite (WASM start, initdb on a fresh directory) takes seconds on a loaded machine.
jest.setTimeout(30_000);

/** The values node-pg's defaults give; the same entity must read the same value on both backends. */
describe('PGlite protocol translation', () => {
  let dataDir: string;
  let backend: PgliteBackend;
  const run = async (text: string, values?: unknown[]): Promise<Exchange> =>
    decodeResponse(await backend.exchange(encodeQuery(text, values)));
  const single = async (text: string, values?: unknown[]): Promise<QueryResult> => {
    const { result, error } = await run(text, values);
    if (error) throw error;
    return result as QueryResult;
  };
  const value = async (sql: string, values?: unknown[]): Promise<unknown> => (await single(sql, values)).rows[0].v;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'pglite-protocol-'));
    backend = await PgliteBackend.open(dataDir, 'postgres');
  });
  afterAll(async () => {
    try {
      await backend?.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  describe('decodes values as node-pg does', () => {
    it.each([
      ['int8 as string (PGlite alone: number)', `SELECT 9007199254740993::int8 AS v`, '9007199254740993'],
      ['numeric as string', `SELECT 1.50::numeric AS v`, '1.50'],
      ['int4 as number', `SELECT 42::int4 AS v`, 42],
      ['float8 as number', `SELECT 0.5::float8 AS v`, 0.5],
      ['bool as boolean', `SELECT true AS v`, true],
      ['uuid as string', `SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid AS v`, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'],
      ['json parsed', `SELECT '{"a":[1,"x"]}'::json AS v`, { a: [1, 'x'] }],
      ['jsonb parsed', `SELECT '{"b":null}'::jsonb AS v`, { b: null }],
      ['text[] with a NULL element (PGlite alone: "NULL")', `SELECT ARRAY['a', NULL, 'b,c']::text[] AS v`, ['a', null, 'b,c']],
      ['int8[] as strings', `SELECT ARRAY[1, 2]::int8[] AS v`, ['1', '2']],
      ['NULL as null', `SELECT NULL::int8 AS v`, null],
    ])('%s', async (_name, sql, expected) => {
      expect(await value(sql)).toEqual(expected);
    });

    it('timestamptz as the exact instant', async () => {
      expect(await value(`SELECT '2024-01-02 03:04:05.678+02'::timestamptz AS v`)).toEqual(
        new Date('2024-01-02T01:04:05.678Z'),
      );
    });

    it('timestamp and date as local-time Dates', async () => {
      expect(await value(`SELECT '2024-01-02 03:04:05.678'::timestamp AS v`)).toEqual(new Date(2024, 0, 2, 3, 4, 5, 678));
      expect(await value(`SELECT '2024-01-02'::date AS v`)).toEqual(new Date(2024, 0, 2));
    });

    it('bytea as Buffer', async () => {
      expect(await value(`SELECT '\\x00ff10'::bytea AS v`)).toEqual(Buffer.from([0, 255, 16]));
    });
  });

  describe('encodes parameters as node-pg does', () => {
    it.each([
      ['Date into timestamptz', new Date('2024-05-06T07:08:09.123Z'), 'timestamptz', new Date('2024-05-06T07:08:09.123Z')],
      ['object into jsonb', { a: { b: [1, 2] } }, 'jsonb', { a: { b: [1, 2] } }],
      ['array into text[]', ['x', null, 'y"z'], 'text[]', ['x', null, 'y"z']],
      ['Buffer into bytea', Buffer.from([1, 2, 3]), 'bytea', Buffer.from([1, 2, 3])],
      ['boolean into bool', false, 'bool', false],
      ['number into int8', 12, 'int8', '12'],
      ['null', null, 'text', null],
    ])('%s', async (_name, param, type, expected) => {
      expect(await value(`SELECT $1::${type} AS v`, [param])).toEqual(expected);
    });
  });

  describe('results carry node-pg command and rowCount', () => {
    beforeAll(() => run('CREATE TABLE items (id int PRIMARY KEY, name text)'));

    it.each([
      ['INSERT', `INSERT INTO items VALUES (1, 'a'), (2, 'b'), (3, 'c')`, 3],
      ['UPDATE', `UPDATE items SET name = 'z' WHERE id >= 2`, 2],
      ['SELECT', `SELECT * FROM items`, 3],
      ['DELETE', `DELETE FROM items WHERE id = 3`, 1],
      ['INSERT', `WITH n AS (SELECT 9 AS id) INSERT INTO items SELECT id, 'w' FROM n`, 1],
      ['CREATE', `CREATE INDEX items_name ON items (name)`, null],
    ])('%s', async (command, sql, rowCount) => {
      expect(await single(sql)).toMatchObject({ command, rowCount });
    });

    it('returns rows and fields of a parameterised statement', async () => {
      const result = await single(`UPDATE items SET name = $1 WHERE id = $2 RETURNING id, name`, ['q', 1]);
      expect(result).toMatchObject({ command: 'UPDATE', rowCount: 1, rows: [{ id: 1, name: 'q' }] });
      expect(result.fields.map((f) => [f.name, f.dataTypeID])).toEqual([['id', 23], ['name', 25]]);
    });

    it('returns one result per statement of a multi-statement text, like node-pg', async () => {
      const { result } = await run(`SELECT 1 AS a; SELECT 2 AS b`);
      expect(result).toMatchObject([{ command: 'SELECT', rows: [{ a: 1 }] }, { command: 'SELECT', rows: [{ b: 2 }] }]);
    });

    it('answers an empty query with an empty result', async () => {
      expect(await single('')).toEqual({ command: null, rowCount: null, rows: [], fields: [] });
    });
  });

  describe('reports the server transaction status', () => {
    afterEach(() => run('ROLLBACK'));

    it.each(['BEGIN', 'START TRANSACTION', 'BEGIN ISOLATION LEVEL SERIALIZABLE'])('%s -> T, COMMIT -> I', async (begin) => {
      expect((await run(begin)).status).toBe('T');
      expect((await run('COMMIT')).status).toBe('I');
    });

    it('a failed statement inside a transaction -> E with the database error', async () => {
      await run('BEGIN');
      const failed = await run('SELECT * FROM no_such_table');
      expect(failed.status).toBe('E');
      expect(failed.error).toMatchObject({ code: '42P01', message: 'relation "no_such_table" does not exist' });
      expect((await run('SELECT 1')).error?.code).toBe('25P02'); // in failed transaction
      expect((await run('ROLLBACK')).status).toBe('I');
    });

    it('a failed parameterised statement outside a transaction -> I', async () => {
      const failed = await run('SELECT $1::int AS v', ['not a number']);
      expect(failed).toMatchObject({ status: 'I', error: { code: '22P02' } });
    });
  });
});
