import { Logger as NestLogger } from '@nestjs/common';
import type { Logger as TypeOrmLogger } from 'typeorm';
import { unreachableDependency } from '../common/outages';

/** TypeORM's errors and warnings through the service's JSON logger; query text stays out of info logs. */
export class TypeOrmNestLogger implements TypeOrmLogger {
  private readonly logger = new NestLogger('Database');

  logQuery(): void {}

  logQueryError(error: string | Error, query: string): void {
    if (unreachableDependency(error)) return; // an outage: logged once by OutageLog, not once per query
    this.logger.error({ msg: 'query failed', error: error instanceof Error ? error.message : error, query: query.slice(0, 500) });
  }

  logQuerySlow(time: number, query: string): void {
    this.logger.warn({ msg: 'slow query', duration_ms: time, query: query.slice(0, 500) });
  }

  logSchemaBuild(message: string): void {
    this.logger.debug(message);
  }

  logMigration(message: string): void {
    this.logger.log(message);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    // An idle pooled connection that died (one line per connection when PostgreSQL restarts): the pool
    // replaces it, and an outage that requests feel is logged once by OutageLog.
    if (level === 'warn' && !String(message).startsWith('Postgres pool raised an error')) this.logger.warn(String(message));
    else this.logger.debug(String(message));
  }
}
