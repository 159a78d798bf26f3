import type { FastifyRequest } from 'fastify';
import { AppException } from '../common/errors';
import { rateLimitRefusals } from '../common/probes';
import { countedIn } from '../common/rate-limit-headers';
import { WINDOW_MS, type WindowStore } from './window-store';

/** The request window of one API key (or console session): docs/API.md#rate-limits-and-quotas. */
export function keyWindowKey(keyId: string): string {
  return `key:${keyId}`;
}

/** The window of a client IP that sends no valid key. */
export function ipWindowKey(request: FastifyRequest): string {
  return `ip:${request.ip}`;
}

/** 429 RATE_LIMITED; the error filter copies `retry_after` into Retry-After and X-RateLimit-Retry-After. */
export function rateLimited(scope: string, limit: number, retryAfterSeconds: number, per = 'minute'): AppException {
  const retryAfter = Math.max(1, retryAfterSeconds);
  if (rateLimitRefusals.hasSubscribers) rateLimitRefusals.publish({ scope });
  return new AppException('RATE_LIMITED', `Rate limit exceeded: ${limit} requests per ${per} (${scope}); retry in ${retryAfter}s`, {
    retry_after: retryAfter,
    details: { scope, limit, per },
  });
}

/**
 * Counts a request that brought no valid credential (an API key, or a trigger's signature)
 * against its client IP's window: past `limit` a minute it is 429, not 401.
 */
export async function countIpFailure(windows: WindowStore, limit: number, request: FastifyRequest): Promise<void> {
  const hit = await windows.hit(ipWindowKey(request), limit, WINDOW_MS);
  countedIn(request, limit, hit.count, hit.resetAt);
  if (!hit.allowed) throw rateLimited('client IP without a valid key', limit, Math.ceil((hit.resetAt - Date.now()) / 1000));
}
