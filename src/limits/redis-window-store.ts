import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { RedisConnections, redisScript } from '../redis/redis-connections';
import { MemoryWindowStore, WindowHit, WindowStore, WindowTake } from './window-store';

/**
 * The rolling window in one Lua script, so replicas share it atomically. Time comes from Redis
 * (TIME), not from each replica's clock. Counts up to ARGV[3] requests (0: a peek), as many as fit.
 * Returns { taken, count, resetAt }.
 */
const HIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window, limit, wanted = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local taken = math.max(0, math.min(wanted, limit - count))
if taken > 0 then
  for i = 1, taken do redis.call('ZADD', KEYS[1], now, now .. '-' .. ARGV[4] .. '-' .. i) end
  redis.call('PEXPIRE', KEYS[1], window)
  count = count + taken
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local reset = now + window
if oldest[2] then reset = tonumber(oldest[2]) + window end
return { taken, count, reset }
`;

/**
 * Shared by every API process through Redis. If Redis fails, limits fail open to this process's
 * own memory window (documented choice: availability over exactness while Redis is away).
 */
export class RedisWindowStore extends WindowStore {
  private readonly logger = new Logger(RedisWindowStore.name);
  private readonly windowHit: (key: string, windowMs: number, limit: number, wanted: number, member: string) => Promise<[number, number, number]>;
  private readonly fallback = new MemoryWindowStore();
  private degraded = false;
  /** Members must be unique within a millisecond across processes: this process's tag and a counter. */
  private readonly processTag = randomBytes(6).toString('hex');
  private hits = 0;

  constructor(private readonly redis: RedisConnections) {
    super();
    this.windowHit = redisScript(redis.commands, 'windowHit', 1, HIT);
  }

  async hit(key: string, limit: number, windowMs: number): Promise<WindowHit> {
    const { taken, count, resetAt } = await this.run(key, limit, windowMs, 1);
    return { allowed: taken === 1, count, resetAt };
  }

  async peek(key: string, limit: number, windowMs: number): Promise<WindowHit> {
    const { count, resetAt } = await this.run(key, limit, windowMs, 0);
    return { allowed: true, count, resetAt };
  }

  hitMany(key: string, limit: number, windowMs: number, n: number): Promise<WindowTake> {
    return this.run(key, limit, windowMs, n);
  }

  private async run(key: string, limit: number, windowMs: number, wanted: number): Promise<WindowTake> {
    try {
      const [taken, count, resetAt] = await this.windowHit(this.redis.name(`rl:${key}`), windowMs, limit, wanted, `${this.processTag}.${++this.hits}`);
      if (this.degraded) this.logger.warn('Redis is back: rate limits are shared again');
      this.degraded = false;
      return { taken, count, resetAt };
    } catch (err) {
      if (!this.degraded) this.logger.error(`Redis unavailable (${(err as Error).message}): rate limits fall back to this process`);
      this.degraded = true;
      return this.fallback.hitMany(key, limit, windowMs, wanted);
    }
  }
}
