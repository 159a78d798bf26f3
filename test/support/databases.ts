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
  available(): boolean;
  /** Environment for the app under test, and the cleanup that removes what it created. */
  prepare(): Promise<{ env: Record<string, string>; cleanup(): Promise<void> }>;
}

export const DATABASE_MODES: DatabaseMode[] = [
  {
    name: 'pglite',
    available: () => true,
    prepare: async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'tos-pglite-'));
      return { env: { DATA_DIR: dir }, cleanup: () => rm(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: 'postgres',
    available: () => !!process.env[POSTGRES_URL_ENV],
    prepare: async () => {
      const database = await createTestDatabase(process.env[POSTGRES_URL_ENV]!);
      return { env: { DATABASE_URL: database.url }, cleanup: () => database.drop() };
    },
  },
];

/**
 * `describe(name [mode])` once per backend. A backend that is unavailable is skipped with a loud
 * warning, except under CI=true, where a skipped contract would hide a failure: there it throws.
 */
export function describeEachDatabase(name: string, fn: (mode: DatabaseMode) => void): void {
  for (const mode of DATABASE_MODES) {
    const title = `${name} [${mode.name}]`;
    if (mode.available()) {
      describe(title, () => fn(mode));
      continue;
    }
    const notice = `"${title}" needs ${mode.name}, which is unavailable (no ${POSTGRES_URL_ENV} from the e2e global setup)`;
    if (process.env.CI === 'true') throw new Error(`${notice}; CI=true forbids skipping it`);
    console.warn(`\n!!! SKIPPED: ${notice}\n`);
    describe.skip(title, () => fn(mode));
  }
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
export function asAdmin(sql: string, url = process.env[POSTGRES_URL_ENV]!): Promise<Record<string, unknown>[]> {
  return queryOnce(url, sql);
}
