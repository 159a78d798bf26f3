/**
 * Fresh databases for e2e suites, and the two backends a contract suite runs on:
 * embedded PGlite (DATA_DIR) and PostgreSQL (DATABASE_URL, a new database on the shared server).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { POSTGRES_URL_ENV } from './global-setup';
import { published } from './prerequisites';

/** The superuser's URL of the PostgreSQL server the e2e global setup started. */
export const postgresUrl = (): string => published(POSTGRES_URL_ENV, 'PostgreSQL');

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(adminUrl: string): Promise<TestDatabase> {
  const name = `tos_test_${randomBytes(6).toString('hex')}`;
  await asAdmin(`CREATE DATABASE "${name}"`, adminUrl);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    // FORCE: a suite that failed midway may still hold connections.
    drop: async () => void (await asAdmin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`, adminUrl)),
  };
}

export interface DatabaseMode {
  name: 'pglite' | 'postgres';
  /** Environment for the app under test, and the cleanup that removes what it created. */
  prepare(): Promise<{ env: Record<string, string>; cleanup(): Promise<void> }>;
}

export const DATABASE_MODES: DatabaseMode[] = [
  {
    name: 'pglite',
    prepare: async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'tos-pglite-'));
      return { env: { DATA_DIR: dir }, cleanup: () => rm(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: 'postgres',
    prepare: async () => {
      const database = await createTestDatabase(postgresUrl());
      return { env: { DATABASE_URL: database.url }, cleanup: () => database.drop() };
    },
  },
];

/** `describe(name [mode])` once per backend (the e2e global setup starts PostgreSQL, or fails the run). */
export function describeEachDatabase(name: string, fn: (mode: DatabaseMode) => void): void {
  for (const mode of DATABASE_MODES) describe(`${name} [${mode.name}]`, () => fn(mode));
}

/** `sql` (with `params`) on the database at `url`, on a connection of its own: its rows. */
export async function queryOnce<T = Record<string, unknown>>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** `sql` as the server's superuser, on the test databases' server (or on `url`): its rows. */
export function asAdmin(sql: string, url = postgresUrl()): Promise<Record<string, unknown>[]> {
  return queryOnce(url, sql);
}
