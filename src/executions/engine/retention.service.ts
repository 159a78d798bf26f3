import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { IdempotencyService } from '../../idempotency/idempotency.service';
import { WebhooksService } from '../../webhooks/webhooks.service';
import { ExecutionsStore } from './executions.store';

/** Purges executions and webhook deliveries past their account's retention and expired idempotency keys, periodically (the worker role's: WorkerModule). */
@Injectable()
export class RetentionService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(RetentionService.name);
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly config: AppConfig,
    private readonly store: ExecutionsStore,
    private readonly idempotency: IdempotencyService,
    private readonly webhooks: WebhooksService,
  ) {}

  onApplicationBootstrap(): void {
    const every = this.config.RETENTION_INTERVAL_SECONDS * 1000;
    if (every === 0) return;
    // Deletes are idempotent, so several workers running this is harmless.
    this.timer = setInterval(() => void this.purge(), every).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  async purge(now = new Date()): Promise<number> {
    try {
      const deleted = await this.store.purgeExpired(now);
      const keys = await this.idempotency.purgeExpired(now);
      const deliveries = await this.webhooks.purgeExpired(now);
      if (deleted + keys + deliveries > 0) this.logger.log(`Purged ${deleted} execution(s) and ${deliveries} webhook deliveries past retention, and ${keys} expired idempotency key(s)`);
      return deleted;
    } catch (err) {
      this.logger.error(`Retention purge failed: ${(err as Error).message}`);
      return 0;
    }
  }
}
