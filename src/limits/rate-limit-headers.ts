import type { FastifyRequest } from 'fastify';
import { AppException } from '../common/errors';
import { rateLimitRefusals } from '../common/probes';

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
