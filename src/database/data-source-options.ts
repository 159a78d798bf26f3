import * as path from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import type { AppConfig } from '../config/app-config';
import { lockDataDir } from './data-dir-lock';
import { MIGRATIONS } from './migrations';
import { TypeOrmNestLogger } from './typeorm-logger';
import { createPgliteDriver } from './pglite';

/**
 * PostgreSQL when DATABASE_URL is set, else PGlite (real Postgres in WASM) in DATA_DIR.
 * Both run the same migrations; schema changes only through migrations. The service's entities are
 * those its feature modules register (autoLoadEntities); the TypeORM CLI passes them all.
 */
export function buildDataSourceOptions(config: AppConfig, entities: DataSourceOptions['entities'] = []): DataSourceOptions {
  const common = {
    type: 'postgres' as const,
    entities,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    logger: new TypeOrmNestLogger(),
    maxQueryExecutionTime: 1000,
  };
  if (config.DATABASE_URL) {
    return { ...common, url: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE, applicationName: 'tool-orchestration-service' };
  }
  const dataDir = claimDataDir(config)!;
  const driver = createPgliteDriver(path.join(dataDir, 'pglite'));
  return { ...common, driver: driver.pg, database: 'postgres', poolSize: 1 };
}

/**
 * In embedded mode, locks DATA_DIR for this process and returns it; entry points call it before
 * Nest starts, so a directory in use is one plain message (ConfigError), not a boot stack trace.
 */
export function claimDataDir(config: AppConfig): string | undefined {
  if (config.DATABASE_URL) return undefined;
  const dataDir = path.resolve(config.DATA_DIR);
  lockDataDir(dataDir);
  return dataDir;
}
