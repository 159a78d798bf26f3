import { DynamicModule, Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import { AppConfig } from '../config/app-config';
import { perConfig } from '../config/per-config';
import { keyWindowKey } from './rate-limit-headers';
import { MemoryQuotaStore, QuotaStore, RedisQuotaStore } from './quota-store';
import { RedisWindowStore } from './redis-window-store';
import { SlidingWindowThrottlerStorage } from './sliding-window.storage';
import { MemoryWindowStore, WINDOW_MS, WindowStore } from './window-store';

const requestOf = (context: { switchToHttp(): { getRequest<T>(): T } }) => context.switchToHttp().getRequest<FastifyRequest>();

/**
 * Rate limits and quotas (docs/API.md#rate-limits-and-quotas): in memory, or in Redis shared by every API process when
 * REDIS_URL is set. One module per configuration, shared by its importers (the app's guards, the
 * executions' admission gate).
 */
@Module({})
export class LimitsModule {
  static readonly forRoot = perConfig((config: AppConfig): DynamicModule => {
    const windows: WindowStore = config.REDIS_URL ? new RedisWindowStore(config.REDIS_URL, config.QUEUE_PREFIX) : new MemoryWindowStore();
    const quotas: QuotaStore = config.REDIS_URL ? new RedisQuotaStore(config.REDIS_URL, config.QUEUE_PREFIX) : new MemoryQuotaStore();
    return {
      module: LimitsModule,
      imports: [
        ThrottlerModule.forRoot({
          throttlers: [
            {
              name: 'key',
              ttl: WINDOW_MS,
              limit: (context) => requestOf(context).principal!.limits.requestsPerMinute,
              getTracker: (request) => (request as FastifyRequest).principal!.keyId,
            },
          ],
          // One window per key across every route, not one per route.
          generateKey: (_context, tracker) => keyWindowKey(tracker),
          storage: new SlidingWindowThrottlerStorage(windows),
        }),
      ],
      providers: [
        { provide: WindowStore, useValue: windows },
        { provide: QuotaStore, useValue: quotas },
      ],
      exports: [WindowStore, QuotaStore],
    };
  });
}
