/** Every window of DESIGN §5.13 is 60 s. */
export const WINDOW_MS = 60_000;

/** One rolling-window decision. */
export interface WindowHit {
  allowed: boolean;
  /** Requests counted in the window, this one included when allowed. */
  count: number;
  /** Epoch ms when the oldest counted request leaves the window (a slot frees). */
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
}

const SWEEP_EVERY = 10_000;

/** In this process: per key, the sorted times of the requests still in the window. */
export class MemoryWindowStore extends WindowStore {
  private readonly logs = new Map<string, number[]>();
  private hitsSinceSweep = 0;

  async hit(key: string, limit: number, windowMs: number, now = Date.now()): Promise<WindowHit> {
    const log = this.prune(key, windowMs, now);
    const allowed = log.length < limit;
    if (allowed) log.push(now);
    if (log.length > 0) this.logs.set(key, log);
    if (++this.hitsSinceSweep >= SWEEP_EVERY) this.sweep(windowMs, now);
    return { allowed, count: log.length, resetAt: (log[0] ?? now) + windowMs };
  }

  async peek(key: string, _limit: number, windowMs: number, now = Date.now()): Promise<WindowHit> {
    const log = this.prune(key, windowMs, now);
    return { allowed: true, count: log.length, resetAt: (log[0] ?? now) + windowMs };
  }

  private prune(key: string, windowMs: number, now: number): number[] {
    const log = this.logs.get(key) ?? [];
    let expired = 0;
    while (expired < log.length && log[expired] <= now - windowMs) expired++;
    if (expired > 0) log.splice(0, expired);
    if (log.length === 0) this.logs.delete(key);
    return log;
  }

  /** Drops idle keys so memory follows active clients, not every client ever seen. */
  private sweep(windowMs: number, now: number): void {
    this.hitsSinceSweep = 0;
    for (const key of [...this.logs.keys()]) this.prune(key, windowMs, now);
  }
}
