import { Logger, OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { failFastRedis } from '../common/redis';

export interface QuotaUse {
  allowed: boolean;
  used: number;
}

/**
 * A counter per account and calendar month. It starts from `seed()` (the month's executions in the
 * database), so a restart or a new replica does not hand out a fresh quota.
 */
export abstract class QuotaStore {
  abstract consume(key: string, limit: number, ttlMs: number, seed: () => Promise<number>): Promise<QuotaUse>;
}

export class MemoryQuotaStore extends QuotaStore {
  private readonly counts = new Map<string, number>();

  async consume(key: string, limit: number, _ttlMs: number, seed: () => Promise<number>): Promise<QuotaUse> {
    if (!this.counts.has(key)) this.counts.set(key, await seed());
    const used = this.counts.get(key)!;
    if (used >= limit) return { allowed: false, used };
    this.counts.set(key, used + 1);
    return { allowed: true, used: used + 1 };
  }
}

const CONSUME = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used >= tonumber(ARGV[1]) then return { 0, used } end
return { 1, redis.call('INCR', KEYS[1]) }
`;

/** Shared by all replicas; fails open to this process's own count while Redis is away. */
export class RedisQuotaStore extends QuotaStore implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisQuotaStore.name);
  private readonly redis: Redis;
  private readonly fallback = new MemoryQuotaStore();

  constructor(url: string, private readonly prefix: string) {
    super();
    this.redis = failFastRedis(url);
    this.redis.defineCommand('quotaConsume', { numberOfKeys: 1, lua: CONSUME });
  }

  async consume(key: string, limit: number, ttlMs: number, seed: () => Promise<number>): Promise<QuotaUse> {
    const redisKey = `${this.prefix}:quota:${key}`;
    try {
      if (!(await this.redis.exists(redisKey))) await this.redis.set(redisKey, await seed(), 'PX', ttlMs, 'NX');
      const [allowed, used] = (await (this.redis as unknown as Record<string, (...args: unknown[]) => Promise<number[]>>).quotaConsume(redisKey, limit)) as [number, number];
      return { allowed: allowed === 1, used };
    } catch (err) {
      this.logger.warn(`quota for ${key} counted locally: Redis unavailable (${(err as Error).message})`);
      return this.fallback.consume(key, limit, ttlMs, seed);
    }
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}
