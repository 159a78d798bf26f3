import { Logger, OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { failFastRedis } from '../common/redis';
import { CachedResult, ResultCache } from './result-cache';

/** Shared by every process; while Redis is away every lookup is a miss (never an error to the client). */
export class RedisResultCache extends ResultCache implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisResultCache.name);
  private readonly redis: Redis;

  constructor(url: string, private readonly prefix: string) {
    super();
    this.redis = failFastRedis(url);
  }

  async get(key: string): Promise<CachedResult | null> {
    try {
      const raw = await this.redis.get(`${this.prefix}:cache:${key}`);
      return raw ? (JSON.parse(raw) as CachedResult) : null;
    } catch (err) {
      this.logger.warn(`cache read skipped: ${(err as Error).message}`);
      return null;
    }
  }

  async set(key: string, scope: string, value: CachedResult): Promise<void> {
    const ttl = value.expires_at - Date.now();
    if (ttl <= 0) return;
    const scopeKey = `${this.prefix}:cache-scope:${scope}`;
    try {
      await this.redis
        .multi()
        .set(`${this.prefix}:cache:${key}`, JSON.stringify(value), 'PX', ttl)
        .sadd(scopeKey, key)
        .pexpire(scopeKey, ttl, 'GT')
        .pexpire(scopeKey, ttl, 'NX')
        .exec();
    } catch (err) {
      this.logger.warn(`cache write skipped: ${(err as Error).message}`);
    }
  }

  async drop(scope: string): Promise<number> {
    const scopeKey = `${this.prefix}:cache-scope:${scope}`;
    const keys = await this.redis.smembers(scopeKey);
    const dropped = keys.length > 0 ? await this.redis.del(...keys.map((k) => `${this.prefix}:cache:${k}`)) : 0;
    await this.redis.del(scopeKey);
    return dropped;
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}
