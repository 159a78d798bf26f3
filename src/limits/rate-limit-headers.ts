import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppException } from '../common/errors';

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix seconds when a slot frees. */
  reset: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The most constraining window this request was counted in. */
    rateLimit?: RateLimitState;
  }
}

/** Keeps the tightest window seen for this request and writes the X-RateLimit-* headers (DESIGN §5.13). */
export function applyRateLimit(request: FastifyRequest, reply: FastifyReply, state: RateLimitState): void {
  if (!request.rateLimit || state.remaining < request.rateLimit.remaining) request.rateLimit = state;
  const { limit, remaining, reset } = request.rateLimit;
  reply.header('x-ratelimit-limit', limit).header('x-ratelimit-remaining', remaining).header('x-ratelimit-reset', reset);
}

/** 429 with `retry_after` equal to Retry-After and X-RateLimit-Retry-After. */
export function rateLimited(reply: FastifyReply, scope: string, limit: number, retryAfterSeconds: number, per = 'minute'): AppException {
  const retryAfter = Math.max(1, retryAfterSeconds);
  reply.header('retry-after', retryAfter).header('x-ratelimit-retry-after', retryAfter);
  return new AppException('RATE_LIMITED', `Rate limit exceeded: ${limit} requests per ${per} (${scope}); retry in ${retryAfter}s`, {
    retry_after: retryAfter,
    details: { scope, limit, per },
  });
}
