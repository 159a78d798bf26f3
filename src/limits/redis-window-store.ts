import { Logger, OnApplicationShutdown } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import { failFastRedis, redisScript } from '../common/redis';
import { MemoryWindowStore, WindowHit, WindowStore } from './window-store';

/**
 * The rolling window in one Lua script, so replicas share it atomically. Time comes from Redis
 * (TIME), not from each replica's clock. Returns { allowed, count, resetAt }.
 */
const HIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window, limit, counts = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3] == '1'
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local allowed = 0
if counts and count < limit then
  redis.call('ZADD', KEYS[1], now, now .. '-' .. ARGV[4])
  redis.call('PEXPIRE', KEYS[1], window)
  count = count + 1
  allowed = 1
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local reset = now + window
if oldest[2] then reset = tonumber(oldest[2]) + window end
return { allowed, count, reset }
`;

/**
 * Shared by every API process through Redis. If Redis fails, limits fail open to this process's
 * own memory window (documented choice: availability over exactness while Redis is away).
 */
export class RedisWindowStore extends WindowStore implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisWindowStore.name);
  private readonly redis: Redis;
  private readonly windowHit: (key: string, windowMs: number, limit: number, counts: string, member: string) => Promise<[number, number, number]>;
  private readonly fallback = new MemoryWindowStore();
  private degraded = false;
  /** Members must be unique within a millisecond across processes: this process's tag and a counter. */
  private readonly processTag = randomBytes(6).toString('hex');
  private hits = 0;

  constructor(url: string, private readonly prefix: string) {
    super();
    this.redis = failFastRedis(url);
    this.windowHit = redisScript(this.redis, 'windowHit', 1, HIT);
  }

  hit(key: string, limit: number, windowMs: number): Promise<WindowHit> {
    return this.run(key, limit, windowMs, true);
  }

  peek(key: string, limit: number, windowMs: number): Promise<WindowHit> {
    return this.run(key, limit, windowMs, false);
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }

  private async run(key: string, limit: number, windowMs: number, counts: boolean): Promise<WindowHit> {
    try {
      const [allowed, count, resetAt] = await this.windowHit(`${this.prefix}:rl:${key}`, windowMs, limit, counts ? '1' : '0', `${this.processTag}.${++this.hits}`);
      if (this.degraded) this.logger.warn('Redis is back: rate limits are shared again');
      this.degraded = false;
      return { allowed: counts ? allowed === 1 : true, count, resetAt };
    } catch (err) {
      if (!this.degraded) this.logger.error(`Redis unavailable (${(err as Error).message}): rate limits fall back to this process`);
      this.degraded = true;
      return counts ? this.fallback.hit(key, limit, windowMs) : this.fallback.peek(key, limit, windowMs);
    }
  }
}
