/**
 * The error envelope (docs/API.md#envelope) for answers written before a request reaches Nest: Fastify's router
 * (undecodable URLs) and Node's HTTP parser (bad request lines, oversized or invalid headers,
 * broken chunked encoding). Nothing the process writes leaves the envelope.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppException } from './errors';
import { SECURITY_HEADERS } from './security-headers';

/** Ids are far shorter; a longer path segment is refused with INVALID_REQUEST, not routed. */
export const MAX_PATH_PARAM_LENGTH = 256;

/** Our words for Fastify's, which would echo the URL back. */
const URL_PROBLEMS: Record<string, string> = {
  FST_ERR_BAD_URL: 'it is not valid percent-encoded UTF-8',
  FST_ERR_MAX_PARAM_LENGTH: `a path segment is longer than the limit (ids are at most ${MAX_PATH_PARAM_LENGTH} characters)`,
};

/** Fastify `frameworkErrors`: the URL could not be decoded or routed. */
export function frameworkErrorHandler(error: Error & { code?: string; statusCode?: number }, _request: FastifyRequest, reply: FastifyReply): void {
  const status = error.statusCode ?? 400;
  const body = new AppException('INVALID_REQUEST', `Malformed request URL: ${URL_PROBLEMS[error.code ?? ''] ?? 'it cannot be routed'}`, { status }).body;
  void reply.status(status).header('content-type', 'application/json; charset=utf-8').send({ error: body });
}

/** Node's parser refused the request; the connection cannot carry another one. */
export function clientErrorHandler(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const message =
    status === 431
      ? 'Request headers too large (URL and headers together are limited to 16 KB)'
      : status === 408
        ? 'Request timed out before it was complete'
        : 'Malformed HTTP request: the request line, a header or the body framing is invalid';
  const payload = JSON.stringify({ error: new AppException('INVALID_REQUEST', message, { status, retryable: status === 408 }).body });
  const headers = Object.entries(SECURITY_HEADERS).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(payload)}\r\n${headers}\r\n${payload}`,
  );
}
