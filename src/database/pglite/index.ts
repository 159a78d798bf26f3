/**
 * Embedded PostgreSQL for TypeORM: a `pg`-module-shaped driver over one persistent PGlite
 * database that lends its single session to one connection at a time (real isolation).
 *
 *   new DataSource({ type: 'postgres', driver: createPgliteDriver(dir).pg, database: 'postgres', ... })
 */
import { createPgModule } from './pool';
import { ExclusiveSession } from './session';

export interface PgliteDriver {
  /** Pass as the TypeORM DataSource option `driver`. */
  pg: object;
  /** Closes the database (as `dataSource.destroy()` does); later connects fail. Idempotent. */
  close(): Promise<void>;
}

/** Opens nothing yet: the data directory is created and PGlite started on the first connect. */
export function createPgliteDriver(dataDir: string): PgliteDriver {
  const session = new ExclusiveSession(dataDir);
  return { pg: createPgModule(session), close: () => session.close() };
}
