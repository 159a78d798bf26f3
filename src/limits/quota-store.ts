import { Logger } from '@nestjs/common';
import { RedisConnections, redisScript } from '../redis/redis-connections';

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
  /** The count without consuming (usage pages). */
  abstract used(key: string, seed: () => Promise<number>): Promise<number>;
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

  async used(key: string, seed: () => Promise<number>): Promise<number> {
    return this.counts.get(key) ?? seed();
  }
}

/** { 1, used } when counted, { 0, used } when over the limit, { -1, 0 } when the month's counter is not seeded yet. */
const CONSUME = `
local used = redis.call('GET', KEYS[1])
if not used then return { -1, 0 } end
used = tonumber(used)
if used >= tonumber(ARGV[1]) then return { 0, used } end
return { 1, redis.call('INCR', KEYS[1]) }
`;
const UNSEEDED = -1;

/** Shared by all replicas; fails open to this process's own count while Redis is away. */
export class RedisQuotaStore extends QuotaStore {
  private readonly logger = new Logger(RedisQuotaStore.name);
  private readonly quotaConsume: (key: string, limit: number) => Promise<[number, number]>;
  private readonly fallback = new MemoryQuotaStore();

  constructor(private readonly redis: RedisConnections) {
    super();
    this.quotaConsume = redisScript(redis.commands, 'quotaConsume', 1, CONSUME);
  }

  async consume(key: string, limit: number, ttlMs: number, seed: () => Promise<number>): Promise<QuotaUse> {
    const redisKey = this.redis.name(`quota:${key}`);
    try {
      let [counted, used] = await this.quotaConsume(redisKey, limit);
      if (counted === UNSEEDED) {
        await this.redis.commands.set(redisKey, await seed(), 'PX', ttlMs, 'NX'); // NX: another replica may have seeded it meanwhile
        [counted, used] = await this.quotaConsume(redisKey, limit);
        if (counted === UNSEEDED) throw new Error('the counter expired as soon as it was seeded');
      }
      return { allowed: counted === 1, used };
    } catch (err) {
      this.logger.warn(`quota for ${key} counted locally: Redis unavailable (${(err as Error).message})`);
      return this.fallback.consume(key, limit, ttlMs, seed);
    }
  }

  async used(key: string, seed: () => Promise<number>): Promise<number> {
    try {
      const used = await this.redis.commands.get(this.redis.name(`quota:${key}`));
      return used === null ? await seed() : Number(used);
    } catch {
      return this.fallback.used(key, seed);
    }
  }
}
