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

/** Comment lines keep proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;

/** An open Server-Sent Events stream: events out, one end. */
export interface EventStream {
  send(event: string, data: unknown, id: string): void;
  /** Ends it, once (also when the client goes away); `onEnd` runs then. */
  end(): void;
  readonly ended: boolean;
}

/**
 * A stream taken over from Fastify (openEventStream) that keeps itself alive, tells the client how
 * soon to reconnect when `reconnectMs` is given, and ends once, by the server or the client.
 */
export function openLiveStream(reply: FastifyReply, onEnd: () => void, reconnectMs?: number): EventStream {
  const raw = openEventStream(reply);
  if (reconnectMs !== undefined) raw.write(`retry: ${reconnectMs}\n\n`);
  const keepalive = setInterval(() => raw.write(': keepalive\n\n'), KEEPALIVE_MS);
  let ended = false;
  const stream: EventStream = {
    send: (event, data, id) => void raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\nid: ${id}\n\n`),
    end: () => {
      if (ended) return;
      ended = true;
      clearInterval(keepalive);
      onEnd();
      raw.end();
    },
    get ended() {
      return ended;
    },
  };
  reply.request.raw.on('close', stream.end);
  return stream;
}
