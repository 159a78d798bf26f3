import { Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import { RedisConnections } from '../redis/redis-connections';
import { keyWindowKey } from './rate-limit-headers';
import { MemoryQuotaStore, QuotaStore, RedisQuotaStore } from './quota-store';
import { RedisWindowStore } from './redis-window-store';
import { SlidingWindowThrottlerStorage } from './sliding-window.storage';
import { MemoryWindowStore, WINDOW_MS, WindowStore } from './window-store';

const requestOf = (context: { switchToHttp(): { getRequest<T>(): T } }) => context.switchToHttp().getRequest<FastifyRequest>();

/** The windows and quotas: in memory, or in Redis shared by every API process when REDIS_URL is set. */
@Module({
  providers: [
    { provide: WindowStore, inject: [RedisConnections], useFactory: (redis: RedisConnections) => (redis.enabled ? new RedisWindowStore(redis) : new MemoryWindowStore()) },
    { provide: QuotaStore, inject: [RedisConnections], useFactory: (redis: RedisConnections) => (redis.enabled ? new RedisQuotaStore(redis) : new MemoryQuotaStore()) },
  ],
  exports: [WindowStore, QuotaStore],
})
class LimitStoresModule {}

/**
 * Rate limits and quotas (docs/API.md#rate-limits-and-quotas). The throttler counts in the same
 * window store as everything else, injected (forRootAsync), so there is one store per application.
 */
@Module({
  imports: [
    LimitStoresModule,
    ThrottlerModule.forRootAsync({
      imports: [LimitStoresModule],
      inject: [WindowStore],
      useFactory: (windows: WindowStore) => ({
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
    }),
  ],
  exports: [LimitStoresModule],
})
export class LimitsModule {}
