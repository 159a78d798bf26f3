/** Every request window is a rolling 60 s (docs/API.md#rate-limits-and-quotas). */
export const WINDOW_MS = 60_000;

/** One rolling-window decision. */
export interface WindowHit {
  allowed: boolean;
  /** Requests counted in the window, this one included when allowed. */
  count: number;
  /** Epoch ms when the oldest counted request leaves the window (a slot frees). */
  resetAt: number;
}

/** Several requests counted at once: as many as fit, in one decision. */
export interface WindowTake {
  /** Requests counted, 0..n: the rest did not fit and are not counted. */
  taken: number;
  count: number;
  resetAt: number;
}

/**
 * A true rolling window (a log of request times, not fixed buckets): `limit` requests pass in any
 * `windowMs`. A refused request is not counted, so a client that waits gets in exactly when a
 * slot frees.
 */
export abstract class WindowStore {
  abstract hit(key: string, limit: number, windowMs: number): Promise<WindowHit>;
  /** The window's state without counting a request (headers on responses no limiter saw). */
  abstract peek(key: string, limit: number, windowMs: number): Promise<WindowHit>;
  /** Counts up to `n` requests at once (one JSON-RPC batch's messages): as many as the window still holds. */
  abstract hitMany(key: string, limit: number, windowMs: number, n: number): Promise<WindowTake>;
}

const SWEEP_EVERY = 10_000;
/** Dropped times are reclaimed once they are this many and at least half of the log. */
const COMPACT_AFTER = 1_024;

/**
 * The times of the requests in one window, oldest first. A busy key holds as many as its limit
 * allows in a minute (hundreds of thousands): dropping the oldest moves a start index instead of
 * shifting the array, so a request costs the same whatever the window holds.
 */
class TimeLog {
  private times: number[] = [];
  private start = 0;

  get size(): number {
    return this.times.length - this.start;
  }

  /** Undefined when empty. */
  get oldest(): number | undefined {
    return this.times[this.start];
  }

  push(time: number): void {
    this.times.push(time);
  }

  dropUpTo(cutoff: number): void {
    while (this.start < this.times.length && this.times[this.start] <= cutoff) this.start++;
    if (this.start >= COMPACT_AFTER && this.start * 2 >= this.times.length) {
      this.times = this.times.slice(this.start);
      this.start = 0;
    }
  }
}

/** In this process: per key, the times of the requests still in the window. */
export class MemoryWindowStore extends WindowStore {
  private readonly logs = new Map<string, TimeLog>();
  private hitsSinceSweep = 0;

  async hit(key: string, limit: number, windowMs: number, now = Date.now()): Promise<WindowHit> {
    const { taken, count, resetAt } = await this.hitMany(key, limit, windowMs, 1, now);
    return { allowed: taken === 1, count, resetAt };
  }

  async hitMany(key: string, limit: number, windowMs: number, n: number, now = Date.now()): Promise<WindowTake> {
    const log = this.prune(key, windowMs, now) ?? new TimeLog();
    const taken = Math.max(0, Math.min(n, limit - log.size));
    for (let i = 0; i < taken; i++) log.push(now);
    if (taken > 0) this.logs.set(key, log);
    if (++this.hitsSinceSweep >= SWEEP_EVERY) this.sweep(windowMs, now);
    return { taken, count: log.size, resetAt: (log.oldest ?? now) + windowMs };
  }

  async peek(key: string, _limit: number, windowMs: number, now = Date.now()): Promise<WindowHit> {
    const log = this.prune(key, windowMs, now);
    return { allowed: true, count: log?.size ?? 0, resetAt: (log?.oldest ?? now) + windowMs };
  }

  /** The key's log without the times that left the window; undefined (and forgotten) when none is left. */
  private prune(key: string, windowMs: number, now: number): TimeLog | undefined {
    const log = this.logs.get(key);
    if (!log) return undefined;
    log.dropUpTo(now - windowMs);
    if (log.size > 0) return log;
    this.logs.delete(key);
    return undefined;
  }

  /** Drops idle keys so memory follows active clients, not every client ever seen. */
  private sweep(windowMs: number, now: number): void {
    this.hitsSinceSweep = 0;
    for (const key of [...this.logs.keys()]) this.prune(key, windowMs, now);
  }
}
