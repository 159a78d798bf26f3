import type { FastifyRequest } from 'fastify';
import { countedIn } from '../common/rate-limit-headers';
import { BUILTIN_ISSUER_PATH } from '../config/app-config';
import { rateLimited } from '../limits/rate-limit-headers';
import { WINDOW_MS, type WindowStore } from '../limits/window-store';

/** The endpoints anyone may call without a credential, each with its own window per client IP. */
const LIMITED = [
  { prefix: `${BUILTIN_ISSUER_PATH}/reg`, name: 'registration' },
  { prefix: `${BUILTIN_ISSUER_PATH}/token`, name: 'token' },
];

/**
 * The built-in authorization server answers outside the Nest guards (src/oauth/authorization-server.ts):
 * Dynamic Client Registration and the token endpoint (with its revocation) count each request against
 * the client IP's window of that endpoint (docs/authorization.md#limits), past which they answer 429.
 */
export async function limitOAuthEndpoint(windows: WindowStore, limit: number, request: FastifyRequest, path: string): Promise<void> {
  const endpoint = LIMITED.find(({ prefix }) => path === prefix || path.startsWith(`${prefix}/`));
  if (!endpoint) return;
  const hit = await windows.hit(`oauth-${endpoint.name}:ip:${request.ip}`, limit, WINDOW_MS);
  countedIn(request, limit, hit.count, hit.resetAt);
  if (!hit.allowed) throw rateLimited(`client IP at the authorization server's ${endpoint.name} endpoint`, limit, Math.ceil((hit.resetAt - Date.now()) / 1000));
}
