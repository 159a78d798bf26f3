/**
 * The `pg` module shape TypeORM's postgres driver drives (see its createPool/closePool and
 * PostgresQueryRunner): `new Pool(options)`, `pool.on('error')`, `pool.connect(cb)`, `pool.end(cb)`,
 * `client.query(text, params?, cb?)`, `client.on/removeListener`, `release(err?)`.
 * Every Pool of one driver shares its single session, so exclusivity holds across DataSources too.
 */
import { EventEmitter } from 'node:events';
import type { QueryResult } from './protocol';
import { type ExclusiveSession, type Lease, SESSION_DATABASE } from './session';

type Result = QueryResult | QueryResult[];
type QueryCallback = (error: Error | null, result?: Result) => void;
type ConnectCallback = (error: Error | undefined, client?: PoolClient, release?: (error?: unknown) => void) => void;

/** The connection options TypeORM passes; only `database` matters, the rest has no meaning here. */
interface PoolOptions {
  database?: string;
}

export function createPgModule(session: ExclusiveSession): { Pool: new (options?: PoolOptions) => EventEmitter } {
  class Pool extends EventEmitter {
    constructor(options: PoolOptions = {}) {
      super();
      // Refuse rather than silently serve another database under the requested name.
      if (options.database !== undefined && options.database !== SESSION_DATABASE) {
        throw new Error(`The PGlite driver serves only the "${SESSION_DATABASE}" database, not "${options.database}"`);
      }
    }

    connect(): Promise<PoolClient>;
    connect(callback: ConnectCallback): void;
    connect(callback?: ConnectCallback): Promise<PoolClient> | void {
      const client = session.acquire().then((lease) => new PoolClient(lease, this));
      if (!callback) return client;
      client.then((c) => callback(undefined, c, c.release), (error: Error) => callback(error));
    }

    end(): Promise<void>;
    end(callback: (error?: Error) => void): void;
    end(callback?: (error?: Error) => void): Promise<void> | void {
      const closed = session.close();
      if (!callback) return closed;
      closed.then(() => callback(), callback);
    }
  }
  return { Pool };
}

/** A checked-out connection: the holder of the session until `release()`. */
class PoolClient extends EventEmitter {
  constructor(
    private readonly lease: Lease,
    private readonly pool: EventEmitter,
  ) {
    super();
  }

  query(text: string, callback: QueryCallback): void;
  query(text: string, values?: readonly unknown[]): Promise<Result>;
  query(text: string, values: readonly unknown[] | undefined, callback: QueryCallback): void;
  query(
    text: string,
    valuesOrCallback?: readonly unknown[] | QueryCallback,
    callback?: QueryCallback,
  ): Promise<Result> | void {
    const done = typeof valuesOrCallback === 'function' ? valuesOrCallback : callback;
    const values = typeof valuesOrCallback === 'function' ? undefined : valuesOrCallback;
    const result =
      typeof text === 'string'
        ? this.lease.query(text, values)
        : Promise.reject(new TypeError('The PGlite driver accepts only SQL text queries (no query objects or streams)'));
    if (!done) return result;
    result.then((r) => done(null, r), (error: Error) => done(error));
  }

  /**
   * node-pg destroys a connection released with an error; the one session cannot be replaced, so
   * the error changes nothing: an open transaction is rolled back as on every release.
   * A cleanup failure surfaces as the pool's 'error' event (TypeORM logs it); the queue moves on.
   */
  release = (_error?: unknown): void => {
    this.lease.release().catch((cleanupError: unknown) => this.pool.emit('error', cleanupError, this));
  };
}
