import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** A strong validator of a response body. */
export function etagOf(body: string | Buffer): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  return !!ifNoneMatch && ifNoneMatch.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*');
}

/** A JSON body serialized once, with its validator: for answers that do not change between requests. */
export interface JsonSnapshot {
  body: string;
  etag: string;
}

export function snapshotJson(value: unknown): JsonSnapshot {
  const body = JSON.stringify(value);
  return { body, etag: etagOf(body) };
}

/** Sends a snapshot as the answer (the hook below then reuses its ETag instead of hashing again). */
export function sendSnapshot(reply: FastifyReply, snapshot: JsonSnapshot): string {
  reply.header('content-type', 'application/json; charset=utf-8').header('etag', snapshot.etag);
  return snapshot.body;
}

/**
 * docs/API.md#caching: GET answers carry ETag and Cache-Control (revalidate: they are per key and change);
 * a matching If-None-Match gets 304 with no body. Invoke answers from the cache set their own.
 */
export async function httpCacheHook(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (request.method !== 'GET' || reply.statusCode !== 200 || typeof payload !== 'string') return payload;
  if (!String(reply.getHeader('content-type') ?? '').startsWith('application/json')) return payload;
  return notModified(request, reply, (reply.getHeader('etag') as string | undefined) ?? etagOf(payload)) ? '' : payload;
}

/** Writes a GET answer's validators; true, with the status set to 304, when If-None-Match holds `etag`. */
export function notModified(request: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  reply.header('etag', etag);
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'private, no-cache');
  if (!matches(request.headers['if-none-match'], etag)) return false;
  reply.code(304);
  reply.removeHeader('content-type');
  return true;
}

/** Validators of an invoke result that is (or now is) in the result cache. */
export function setCachedResultHeaders(reply: FastifyReply, etag: string, storedAt: number, ttlSeconds: number): void {
  reply
    .header('etag', etag)
    .header('last-modified', new Date(storedAt).toUTCString())
    .header('cache-control', `private, max-age=${ttlSeconds}`);
}
