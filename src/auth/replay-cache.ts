import { Logger } from '@nestjs/common';
import { RedisConnections } from '../redis/redis-connections';

/** At most this many signatures are remembered in one process; past it the oldest go first. */
const MAX_REMEMBERED = 100_000;

/**
 * Signatures already accepted, so a captured signed request cannot be sent again while its
 * timestamp is still inside the window (docs/API.md#signed-requests).
 */
export abstract class ReplayCache {
  /** True the first time `key` is seen within `ttlMs`; false for a replay. */
  abstract firstSight(key: string, ttlMs: number): Promise<boolean>;
}

/** One process's memory: entries expire in insertion order, since every entry has the same lifetime. */
export class MemoryReplayCache extends ReplayCache {
  private readonly seen = new Map<string, number>();

  firstSight(key: string, ttlMs: number, now = Date.now()): Promise<boolean> {
    for (const [oldest, until] of this.seen) {
      if (until > now && this.seen.size < MAX_REMEMBERED) break;
      this.seen.delete(oldest);
    }
    const until = this.seen.get(key);
    if (until !== undefined && until > now) return Promise.resolve(false);
    this.seen.set(key, now + ttlMs);
    return Promise.resolve(true);
  }
}

/**
 * Shared by every API process through Redis (SET NX with an expiry). While Redis is away it falls
 * back to this process's memory, as the rate limits do (src/limits/redis-window-store.ts).
 */
export class RedisReplayCache extends ReplayCache {
  private readonly logger = new Logger(RedisReplayCache.name);
  private readonly fallback = new MemoryReplayCache();
  private degraded = false;

  constructor(private readonly redis: RedisConnections) {
    super();
  }

  async firstSight(key: string, ttlMs: number): Promise<boolean> {
    try {
      const set = await this.redis.commands.set(this.redis.name(`sig:${key}`), '1', 'PX', ttlMs, 'NX');
      if (this.degraded) this.logger.warn('Redis is back: the signature replay cache is shared again');
      this.degraded = false;
      return set === 'OK';
    } catch (err) {
      if (!this.degraded) this.logger.error(`Redis unavailable (${(err as Error).message}): signature replays are caught in this process only`);
      this.degraded = true;
      return this.fallback.firstSight(key, ttlMs);
    }
  }
}
