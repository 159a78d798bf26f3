import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppException } from './errors';

/** What an outage takes away: PostgreSQL (or PGlite), or Redis. */
export type Dependency = 'database' | 'redis';

/** Seconds a client waits before retrying a request refused by an outage (Retry-After); a PostgreSQL restart takes a few. */
export const OUTAGE_RETRY_AFTER_SECONDS = 2;

/** Socket-level failures (Node), and SQLSTATEs of a server that is away: class 08, shutdown and start-up (57P0x), full (53300). */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', '57P01', '57P02', '57P03', '53300']);
/** pg and PGlite say so in words only. */
const DATABASE_GONE = /Connection terminated|is not currently accepting connections|timeout exceeded when trying to connect|Client has encountered a connection error|PGlite is closed|Cannot use a pool after calling end/i;
/** ioredis: a closed connection, a command refused while offline, retries exhausted. */
const REDIS_GONE = /^Connection is closed|Stream isn't writeable|enableOfflineQueue|max retries per request/i;

/**
 * The dependency an error says is unreachable, or null for any other error. Looks through the
 * wrappers (TypeORM's `driverError`, `cause`, Node's AggregateError of each address tried).
 */
export function unreachableDependency(error: unknown, depth = 0): Dependency | null {
  if (!error || typeof error !== 'object' || depth > 4) return null;
  const { code, message, name, driverError, cause, errors } = error as { code?: unknown; message?: unknown; name?: unknown; driverError?: unknown; cause?: unknown; errors?: unknown };
  const text = typeof message === 'string' ? message : '';
  if (name === 'MaxRetriesPerRequestError' || REDIS_GONE.test(text)) return 'redis';
  // An unattributed socket failure on the request path is the database's: Redis callers there fall back instead of throwing.
  if ((typeof code === 'string' && (CONNECTION_CODES.has(code) || code.startsWith('08'))) || DATABASE_GONE.test(text)) return 'database';
  for (const inner of [driverError, cause, ...(Array.isArray(errors) ? errors : [])]) {
    const found = unreachableDependency(inner, depth + 1);
    if (found) return found;
  }
  return null;
}

/** The answer to a request refused by an outage (503 is retryable: docs/API.md#errors). */
export function dependencyUnavailable(dependency: Dependency): AppException {
  return new AppException('INTERNAL_ERROR', `The ${dependency} is unavailable; nothing was done, retry shortly`, {
    status: 503,
    retryable: true,
    retry_after: OUTAGE_RETRY_AFTER_SECONDS,
    details: { unavailable: dependency },
  });
}

const PROBE_INTERVAL_MS = 1_000;

/**
 * One log line when a dependency becomes unreachable and one when it answers again, however
 * many requests fail in between: while it is down, its probe is tried every second (one without
 * a probe is taken as back after a second, so it logs at most a line a second).
 */
export class OutageLog {
  private readonly logger = new Logger('Outage');
  private readonly down = new Map<Dependency, { since: number; failures: number }>();

  constructor(private readonly probes: Partial<Record<Dependency, () => Promise<unknown>>>) {}

  report(dependency: Dependency, error: unknown): void {
    const outage = this.down.get(dependency);
    if (outage) {
      outage.failures++;
      return;
    }
    this.down.set(dependency, { since: Date.now(), failures: 1 });
    this.logger.warn(`${dependency} unreachable (${(error as Error)?.message}): requests that need it answer 503 until it is back`);
    this.watch(dependency);
  }

  private watch(dependency: Dependency): void {
    const timer = setTimeout(() => {
      (this.probes[dependency]?.() ?? Promise.resolve()).then(
        () => {
          const { since, failures } = this.down.get(dependency)!;
          this.down.delete(dependency);
          this.logger.log(`${dependency} reachable again after ${((Date.now() - since) / 1000).toFixed(1)} s; ${failures} requests were refused meanwhile`);
        },
        () => this.watch(dependency),
      );
    }, PROBE_INTERVAL_MS);
    timer.unref();
  }
}

/** The process's one outage log for its database (provided by DatabaseModule): REST and MCP requests refused by one outage share its two lines. */
@Injectable()
export class DatabaseOutages extends OutageLog {
  constructor(dataSource: DataSource) {
    super({ database: () => dataSource.query('SELECT 1') });
  }
}
