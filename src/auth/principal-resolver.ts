import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppException } from '../common/errors';
import { AppConfig } from '../config/app-config';
import type { Principal } from '../identity/principal';
import { countedIn } from '../common/rate-limit-headers';
import { ipWindowKey, rateLimited } from '../limits/rate-limit-headers';
import { WINDOW_MS, WindowStore } from '../limits/window-store';
import { ConsoleSessions } from '../sessions/console-sessions.service';
import { CSRF_HEADER, csrfTokenMatches, sessionSecretOf } from '../sessions/console-credentials';
import { KeyVerifier } from './key-verifier';

const BEARER = /^Bearer\s+(\S+)\s*$/i;
/** Methods that change nothing: the only ones a console session may send without its CSRF token. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const FAILURE_MESSAGES = {
  malformed: 'Malformed API key: expected sk_user_, sk_svc_ or sk_temp_ followed by 32 letters or digits',
  unknown: 'Invalid API key',
  revoked: 'API key has been revoked',
  expired: 'API key has expired',
} as const;

/**
 * Who sends a request: `Authorization: Bearer <key>`, or without that header a console session's
 * cookie plus its CSRF token on state-changing requests. A request that proves neither counts
 * against its client IP's window and is refused (401, or 429 past that window).
 */
@Injectable()
export class PrincipalResolver {
  constructor(
    private readonly verifier: KeyVerifier,
    private readonly sessions: ConsoleSessions,
    private readonly windows: WindowStore,
    private readonly config: AppConfig,
  ) {}

  /** The request's principal, also set on `request.principal`; throws UNAUTHORIZED, FORBIDDEN or RATE_LIMITED. */
  async resolve(request: FastifyRequest, reply: FastifyReply): Promise<Principal> {
    const header = request.headers.authorization;
    const sessionSecret = header ? undefined : sessionSecretOf(request);
    if (sessionSecret) return this.resolveSession(request, sessionSecret);
    const secret = header ? BEARER.exec(header)?.[1] : undefined;
    if (!secret) {
      await this.countFailure(request);
      reply.header('www-authenticate', 'Bearer');
      throw new AppException('UNAUTHORIZED', header ? 'Malformed Authorization header: expected "Bearer <API key>"' : 'Missing API key: send Authorization: Bearer <API key>');
    }
    const verification = await this.verifier.verify(secret);
    if (!verification.ok) {
      await this.countFailure(request);
      reply.header('www-authenticate', 'Bearer error="invalid_token"');
      const when = verification.at ? ` (at ${verification.at.toISOString()})` : '';
      throw new AppException('UNAUTHORIZED', FAILURE_MESSAGES[verification.reason] + when);
    }
    request.principal = verification.principal;
    return verification.principal;
  }

  /** A console session acts as its account's principal; a request that changes something must prove it came from the console page. */
  private async resolveSession(request: FastifyRequest, secret: string): Promise<Principal> {
    const check = await this.sessions.verify(secret);
    if (!check.ok) {
      await this.countFailure(request);
      throw new AppException('UNAUTHORIZED', check.reason);
    }
    if (!SAFE_METHODS.has(request.method) && !csrfTokenMatches(secret, request.headers[CSRF_HEADER])) {
      throw new AppException('FORBIDDEN', `Missing or wrong ${CSRF_HEADER} header: a console session's state-changing requests carry its CSRF token`);
    }
    request.principal = check.principal;
    return check.principal;
  }

  /** Requests without a valid key count against their client IP's window; past it they get 429, not 401. */
  private async countFailure(request: FastifyRequest): Promise<void> {
    const limit = this.config.IP_RATE_LIMIT;
    const hit = await this.windows.hit(ipWindowKey(request), limit, WINDOW_MS);
    countedIn(request, limit, hit.count, hit.resetAt);
    if (!hit.allowed) throw rateLimited('client IP without a valid key', limit, Math.ceil((hit.resetAt - Date.now()) / 1000));
  }
}
