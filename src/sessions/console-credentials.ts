import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { randomBase62 } from '../common/ids';

/** The cookie that carries a console session's secret. */
export const SESSION_COOKIE = 'tos_console';
/** The header every state-changing console request carries, against cross-site request forgery. */
export const CSRF_HEADER = 'x-csrf-token';

/** ~256 bits: link tokens and session secrets are bearer credentials. */
const SECRET_LENGTH = 43;
const SECRET_PATTERN = /^[0-9A-Za-z]{43}$/;

export function newConsoleSecret(): string {
  return randomBase62(SECRET_LENGTH);
}

export function isConsoleSecret(value: string): boolean {
  return SECRET_PATTERN.test(value);
}

/** The session secret from the Cookie header, if one that could be ours is there. */
export function sessionSecretOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq !== -1 && pair.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = pair.slice(eq + 1).trim();
      return isConsoleSecret(value) ? value : undefined;
    }
  }
  return undefined;
}

/** HttpOnly (scripts never read it), SameSite=Strict (other sites never send it), Secure under TLS. */
export function sessionCookie(secret: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${secret}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return sessionCookie('', 0, secure);
}

/**
 * The session's CSRF token, derived from its secret: the page learns it from GET /console/session
 * (same origin only), a forged cross-site request cannot, and nothing more is stored.
 */
export function csrfTokenOf(secret: string): string {
  return createHmac('sha256', secret).update('tos console csrf').digest('base64url');
}

export function csrfTokenMatches(secret: string, given: string | string[] | undefined): boolean {
  if (typeof given !== 'string') return false;
  const expected = Buffer.from(csrfTokenOf(secret));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
