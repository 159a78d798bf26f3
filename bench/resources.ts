/** What a bench configuration needs besides the service: each starts one and says which variables point the service at it. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { startPostgres } from '../test/support/postgres-server';
import { startRedis } from '../test/support/redis-server';

/** Something a configuration needs besides the service: the variables it adds, and its removal. */
export type Resource = (signal: AbortSignal) => Promise<{ env: Record<string, string>; cleanup(): Promise<void> }>;

export const embeddedDataDir: Resource = async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'tos-bench-data-'));
  return { env: { DATA_DIR: dir }, cleanup: () => rm(dir, { recursive: true, force: true }) };
};

export const postgresDatabase: Resource = async () => {
  const server = await startPostgres();
  try {
    const admin = new Client({ connectionString: server.url });
    await admin.connect();
    await admin.query('CREATE DATABASE tos_bench').finally(() => admin.end());
  } catch (error) {
    await server.stop();
    throw error;
  }
  return { env: { DATABASE_URL: server.url.replace(/\/postgres$/, '/tos_bench') }, cleanup: () => server.stop() };
};

export const redis: Resource = async () => {
  const server = await startRedis();
  return { env: { REDIS_URL: server.url }, cleanup: () => server.stop() };
};

