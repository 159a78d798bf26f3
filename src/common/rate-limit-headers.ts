import type { FastifyReply, FastifyRequest } from 'fastify';

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

/**
 * Notes a window this request was counted in: `counted` requests of `limit`, a slot freeing at
 * `resetAt` (epoch ms). The tightest one is kept; writeRateLimitHeaders sends it.
 */
export function countedIn(request: FastifyRequest, limit: number, counted: number, resetAt: number): void {
  const state = { limit, remaining: Math.max(0, limit - counted), reset: Math.ceil(resetAt / 1000) };
  if (!request.rateLimit || state.remaining < request.rateLimit.remaining) request.rateLimit = state;
}

/**
 * The one writer of the X-RateLimit-* headers (docs/API.md#headers): the tightest window the request
 * was counted in. Called as the response goes out (app.setup's onSend hook, errors included) and
 * when an event stream takes the response over from Fastify (openEventStream).
 */
export function writeRateLimitHeaders(request: FastifyRequest, reply: FastifyReply): void {
  const tightest = request.rateLimit;
  if (!tightest) return;
  reply.header('x-ratelimit-limit', tightest.limit).header('x-ratelimit-remaining', tightest.remaining).header('x-ratelimit-reset', tightest.reset);
}
