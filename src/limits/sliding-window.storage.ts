import type { ThrottlerStorage } from '@nestjs/throttler';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';
import { WindowStore } from './window-store';

/** The throttler's record plus the exact moment a slot frees, for the X-RateLimit-Reset header. */
export interface WindowRecord extends ThrottlerStorageRecord {
  resetAt: number;
}

/** @nestjs/throttler's storage contract on top of our rolling windows (times in seconds, as it expects). */
export class SlidingWindowThrottlerStorage implements ThrottlerStorage {
  constructor(readonly windows: WindowStore) {}

  async increment(key: string, ttl: number, limit: number): Promise<WindowRecord> {
    const hit = await this.windows.hit(key, limit, ttl);
    const secondsToSlot = Math.max(0, Math.ceil((hit.resetAt - Date.now()) / 1000));
    return {
      totalHits: hit.allowed ? hit.count : hit.count + 1,
      timeToExpire: secondsToSlot,
      isBlocked: !hit.allowed,
      timeToBlockExpire: secondsToSlot,
      resetAt: hit.resetAt,
    };
  }
}
