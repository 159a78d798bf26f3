import type { FastifyReply, FastifyRequest } from 'fastify';
import { countedIn, writeRateLimitHeaders } from './rate-limit-headers';

describe('rate-limit headers', () => {
  const reply = () => {
    const headers: Record<string, unknown> = {};
    const fake = { header: (name: string, value: unknown) => ((headers[name] = value), fake) };
    return { headers, reply: fake as unknown as FastifyReply };
  };

  it('writes the tightest window a request was counted in, whatever the order', () => {
    const request = {} as FastifyRequest;
    countedIn(request, 100, 10, 61_000); // 90 left
    countedIn(request, 5, 4, 30_500); // 1 left: the tightest
    countedIn(request, 50, 20, 10_000); // 30 left
    const { headers, reply: sent } = reply();
    writeRateLimitHeaders(request, sent);
    expect(headers).toEqual({ 'x-ratelimit-limit': 5, 'x-ratelimit-remaining': 1, 'x-ratelimit-reset': 31 });
  });

  it('never shows a negative remainder, and writes nothing for a request no window counted', () => {
    const request = {} as FastifyRequest;
    const { headers, reply: sent } = reply();
    writeRateLimitHeaders(request, sent);
    expect(headers).toEqual({});
    countedIn(request, 3, 4, 1_000);
    writeRateLimitHeaders(request, sent);
    expect(headers['x-ratelimit-remaining']).toBe(0);
  });
});
