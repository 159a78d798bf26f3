import { Module } from '@nestjs/common';
import { RedisConnections } from '../redis/redis-connections';
import { RedisResultCache } from './redis-result-cache';
import { MemoryResultCache, ResultCache } from './result-cache';

/** The result cache: in memory, or in Redis shared by all API processes when REDIS_URL is set. */
@Module({
  providers: [
    { provide: ResultCache, inject: [RedisConnections], useFactory: (redis: RedisConnections) => (redis.enabled ? new RedisResultCache(redis) : new MemoryResultCache()) },
  ],
  exports: [ResultCache],
})
export class CacheModule {}
