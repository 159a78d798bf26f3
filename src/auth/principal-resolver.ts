import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppException } from '../common/errors';
import { AppConfig } from '../config/app-config';
import type { Principal } from '../identity/principal';
import { countIpFailure } from '../limits/rate-limit-headers';
import { WindowStore } from '../limits/window-store';
import { ConsoleSessions } from '../sessions/console-sessions.service';
import { CSRF_HEADER, csrfTokenMatches, sessionSecretOf } from '../sessions/console-credentials';
import { KeyVerifier } from './key-verifier';
import { checkSignature, SIGNATURE_HEADER, SIGNATURE_WINDOW_SECONDS, TIMESTAMP_HEADER } from '../identity/request-signature';
import { rawBodyOf } from '../common/raw-body';
import { ReplayCache } from './replay-cache';
import { AccessTokenVerifier } from './access-token-verifier';
import { bearerChallenge, metadataUrl, resourcePathOf, type ResourcePath } from './protected-resource';

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
 * Who sends a request: `Authorization: Bearer <key>` or an OAuth access token, or without that header a console session's
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
    private readonly replays: ReplayCache,
    private readonly tokens: AccessTokenVerifier,
  ) {}

  /** The request's principal, also set on `request.principal`; throws UNAUTHORIZED, FORBIDDEN or RATE_LIMITED. */
  async resolve(request: FastifyRequest, reply: FastifyReply): Promise<Principal> {
    const header = request.headers.authorization;
    const sessionSecret = header ? undefined : sessionSecretOf(request);
    const resource = resourcePathOf(request.url) ?? '/v1';
    if (sessionSecret) return this.resolveSession(request, reply, sessionSecret, resource);
    const secret = header ? BEARER.exec(header)?.[1] : undefined;
    if (!secret) {
      await this.countFailure(request);
      reply.header('www-authenticate', bearerChallenge(this.config, resource));
      throw new AppException('UNAUTHORIZED', header ? 'Malformed Authorization header: expected "Bearer <API key or access token>"' : 'Missing API key or access token: send Authorization: Bearer <API key or OAuth access token>', {
        suggestion: `OAuth clients: the authorization server is named in ${metadataUrl(this.config, resource)}`,
      });
    }
    if (this.tokens.accepts(secret)) return this.resolveToken(request, reply, secret, resource);
    const verification = await this.verifier.verify(secret);
    if (!verification.ok) {
      await this.countFailure(request);
      reply.header('www-authenticate', bearerChallenge(this.config, resource, 'invalid_token'));
      const when = verification.at ? ` (at ${verification.at.toISOString()})` : '';
      throw new AppException('UNAUTHORIZED', FAILURE_MESSAGES[verification.reason] + when);
    }
    if (verification.signingSecret) await this.checkSigned(request, reply, verification.principal.keyId, verification.signingSecret);
    request.principal = verification.principal;
    return verification.principal;
  }

  /**
   * A key that requires signed requests (docs/API.md#signed-requests): the signature over the raw
   * body, inside the window, and never seen before. Refusals count like a bad key's.
   */
  private async checkSigned(request: FastifyRequest, reply: FastifyReply, keyId: string, signingSecret: string): Promise<void> {
    const header = (name: string) => {
      const value = request.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const check = checkSignature(
      signingSecret,
      { timestamp: header(TIMESTAMP_HEADER), signature: header(SIGNATURE_HEADER) },
      { method: request.method, pathWithQuery: request.url, body: rawBodyOf(request) },
    );
    let refusal = check.ok ? null : check.message;
    if (check.ok && !(await this.replays.firstSight(`${keyId}:${check.signature}`, 2 * SIGNATURE_WINDOW_SECONDS * 1000))) {
      refusal = 'Replayed request: this X-Signature was already used; sign each request afresh with a new X-Timestamp';
    }
    if (refusal === null) return;
    await this.countFailure(request);
    reply.header('www-authenticate', 'Signature realm="tos", headers="x-timestamp x-signature"');
    throw new AppException('UNAUTHORIZED', refusal, { suggestion: 'See docs/API.md#signed-requests for the exact string signed' });
  }

  /** An OAuth access token (docs/authorization.md#access-tokens): refusals count like a bad key's. */
  private async resolveToken(request: FastifyRequest, reply: FastifyReply, token: string, resource: ResourcePath): Promise<Principal> {
    const verification = await this.tokens.verify(token, resource);
    if (!verification.ok) {
      await this.countFailure(request);
      reply.header('www-authenticate', bearerChallenge(this.config, resource, 'invalid_token'));
      throw new AppException('UNAUTHORIZED', verification.message);
    }
    request.principal = verification.principal;
    return verification.principal;
  }

  /** A console session acts as its account's principal; a request that changes something must prove it came from the console page. */
  private async resolveSession(request: FastifyRequest, reply: FastifyReply, secret: string, resource: ResourcePath): Promise<Principal> {
    const check = await this.sessions.verify(secret);
    if (!check.ok) {
      await this.countFailure(request);
      reply.header('www-authenticate', bearerChallenge(this.config, resource));
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
    await countIpFailure(this.windows, this.config.IP_RATE_LIMIT, request);
  }
}
