import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppException } from './errors';

export const CURRENT_API_VERSION = '1.0';
const SUPPORTED = new Set(['1', '1.0']);
/** Retired versions and their sunset dates (docs/API.md#headers). */
const RETIRED: Record<string, string> = { '0.9': '2026-09-28' };

/**
 * `API-Version` absent → 1.0; 1.0 accepted; a retired version → 410; anything else → 400.
 * Every response says which version answered.
 */
export async function apiVersionHook(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  reply.header('api-version', CURRENT_API_VERSION);
  const asked = request.headers['api-version'];
  if (asked === undefined || (typeof asked === 'string' && SUPPORTED.has(asked.trim()))) return;
  const version = String(asked).trim();
  const sunset = RETIRED[version];
  if (sunset) {
    throw new AppException('INVALID_REQUEST', `API version ${version} was retired on ${sunset}; use API-Version: ${CURRENT_API_VERSION}`, {
      status: 410,
      details: { parameter: 'API-Version', expected: CURRENT_API_VERSION, received: version },
    });
  }
  throw AppException.invalidRequest(`Unsupported API-Version '${version.slice(0, 20)}'; supported: ${CURRENT_API_VERSION}`, {
    parameter: 'API-Version',
    expected: CURRENT_API_VERSION,
  });
}
