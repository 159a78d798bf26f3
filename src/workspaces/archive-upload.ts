/**
 * The one place a request body is not JSON: an archive posted to POST /v1/workspaces. Fastify
 * parses archive content types into a Buffer, for that route only and up to WORKSPACE_MAX_BYTES;
 * everywhere else they stay 415 like any other non-JSON body.
 */
import type { FastifyInstance } from 'fastify';
import { AppException } from '../common/errors';
import type { ArchiveFormat } from './archive';

const WORKSPACES_ROUTE = '/v1/workspaces';

const FORMAT_BY_TYPE: Record<string, ArchiveFormat> = {
  'application/gzip': 'tar.gz',
  'application/x-gzip': 'tar.gz',
  'application/x-tar+gzip': 'tar.gz',
  'application/x-compressed-tar': 'tar.gz',
  'application/zip': 'zip',
  'application/x-zip-compressed': 'zip',
};

export function installArchiveUploads(fastify: FastifyInstance, maxBytes: number): void {
  fastify.addContentTypeParser([...Object.keys(FORMAT_BY_TYPE), 'application/octet-stream'], { parseAs: 'buffer', bodyLimit: maxBytes }, (request, body, done) => {
    if (request.routeOptions.url !== WORKSPACES_ROUTE || request.method !== 'POST') {
      // Fastify's own answer for a type it has no parser for: the error filter words every 415 alike.
      done(Object.assign(new Error('Unsupported Media Type'), { statusCode: 415 }), undefined);
      return;
    }
    done(null, body);
  });
}

/** The archive format a request's Content-Type names, or (for octet-stream) its magic bytes show. */
export function archiveFormat(contentType: string | undefined, body: Buffer): ArchiveFormat {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  const named = FORMAT_BY_TYPE[type];
  if (named) return named;
  if (body[0] === 0x1f && body[1] === 0x8b) return 'tar.gz';
  if (body[0] === 0x50 && body[1] === 0x4b) return 'zip';
  throw new AppException('INVALID_INPUT', 'The body is neither a gzip-compressed tar nor a zip archive', { details: { parameter: 'body', expected: 'a .tar.gz or .zip archive' } });
}
