import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppException } from '../common/errors';
import { rateLimitRefusals } from '../common/probes';

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

/** The request window of one API key (or console session): docs/API.md#rate-limits-and-quotas. */
export function keyWindowKey(keyId: string): string {
  return `key:${keyId}`;
}

/** The window of a client IP that sends no valid key. */
export function ipWindowKey(request: FastifyRequest): string {
  return `ip:${request.ip}`;
}

/**
 * Keeps the tightest window seen for this request and writes the X-RateLimit-* headers (docs/API.md#headers):
 * `counted` requests of `limit` are in the window; a slot frees at `resetAt` (epoch ms).
 */
export function applyRateLimit(request: FastifyRequest, reply: FastifyReply, limit: number, counted: number, resetAt: number): void {
  const state = { limit, remaining: Math.max(0, limit - counted), reset: Math.ceil(resetAt / 1000) };
  if (!request.rateLimit || state.remaining < request.rateLimit.remaining) request.rateLimit = state;
  const tightest = request.rateLimit;
  reply.header('x-ratelimit-limit', tightest.limit).header('x-ratelimit-remaining', tightest.remaining).header('x-ratelimit-reset', tightest.reset);
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
