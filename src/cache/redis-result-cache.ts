import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { RedisConnections, redisScript } from '../redis/redis-connections';
import { CachedResult, ResultCache } from './result-cache';

/**
 * Stores a result and adds it to its scope (for invalidation), whose expiry only ever grows; one
 * script instead of a MULTI of four commands, which cost the client more CPU than the lookup it saves.
 */
const STORE = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
`;

/** Shared by every process; while Redis is away every lookup is a miss (never an error to the client). */
export class RedisResultCache extends ResultCache {
  private readonly logger = new Logger(RedisResultCache.name);
  private readonly redis: Redis;
  private readonly store: (resultKey: string, scopeKey: string, value: string, ttlMs: number, member: string) => Promise<unknown>;

  constructor(private readonly connections: RedisConnections) {
    super();
    this.redis = connections.commands;
    this.store = redisScript(this.redis, 'storeResult', 2, STORE);
  }

  async get(key: string): Promise<CachedResult | null> {
    try {
      const raw = await this.redis.get(this.connections.name(`cache:${key}`));
      return raw ? (JSON.parse(raw) as CachedResult) : null;
    } catch (err) {
      this.logger.warn(`cache read skipped: ${(err as Error).message}`);
      return null;
    }
  }

  async set(key: string, scope: string, value: CachedResult): Promise<void> {
    const ttl = value.expires_at - Date.now();
    if (ttl <= 0) return;
    const scopeKey = this.connections.name(`cache-scope:${scope}`);
    try {
      await this.store(this.connections.name(`cache:${key}`), scopeKey, JSON.stringify(value), ttl, key);
    } catch (err) {
      this.logger.warn(`cache write skipped: ${(err as Error).message}`);
    }
  }

  async drop(scope: string): Promise<number> {
    const scopeKey = this.connections.name(`cache-scope:${scope}`);
    const keys = await this.redis.smembers(scopeKey);
    const dropped = keys.length > 0 ? await this.redis.del(...keys.map((k) => this.connections.name(`cache:${k}`))) : 0;
    await this.redis.del(scopeKey);
    return dropped;
  }
}
