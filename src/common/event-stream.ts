import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { writeRateLimitHeaders } from './rate-limit-headers';

/**
 * Takes the response over from Fastify for a Server-Sent Events stream: the headers set so far
 * (security, request id, rate limits) plus the stream's own, written at once. Fastify's onSend
 * hooks (compression among them) would buffer the events, so they are bypassed.
 */
export function openEventStream(reply: FastifyReply, status = 200): ServerResponse {
  writeRateLimitHeaders(reply.request, reply);
  reply.hijack();
  const headers: Record<string, string | number | string[]> = {
    ...(reply.getHeaders() as Record<string, string | number | string[]>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
  };
  // HTTP/2 forbids connection-specific headers; its streams stay open anyway.
  if (reply.request.raw.httpVersionMajor < 2) headers.connection = 'keep-alive';
  reply.raw.writeHead(status, headers);
  return reply.raw as ServerResponse;
}
