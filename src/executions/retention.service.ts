import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { ExecutionsStore } from './executions.store';

/** Purges executions past their account's retention, periodically, in worker processes. */
@Injectable()
export class RetentionService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(RetentionService.name);
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly config: AppConfig,
    private readonly store: ExecutionsStore,
  ) {}

  onApplicationBootstrap(): void {
    const every = this.config.RETENTION_INTERVAL_SECONDS * 1000;
    if (!this.config.runsWorker || every === 0) return;
    // Deletes are idempotent, so several workers running this is harmless.
    this.timer = setInterval(() => void this.purge(), every).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  async purge(now = new Date()): Promise<number> {
    try {
      const deleted = await this.store.purgeExpired(now);
      if (deleted > 0) this.logger.log(`Purged ${deleted} execution(s) past retention`);
      return deleted;
    } catch (err) {
      this.logger.error(`Retention purge failed: ${(err as Error).message}`);
      return 0;
    }
  }
}
