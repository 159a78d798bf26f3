import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppException } from '../common/errors';
import { KeyVerifier } from '../keys/key-verifier';
import { PUBLIC_ROUTE, REQUIRED_SCOPES } from './auth.decorators';
import { canUseTool } from './principal';
import type { Scope } from './scopes';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

const FAILURE_MESSAGES = {
  malformed: 'Malformed API key: expected sk_user_, sk_svc_ or sk_temp_ followed by 32 letters or digits',
  unknown: 'Invalid API key',
  revoked: 'API key has been revoked',
  expired: 'API key has expired',
} as const;

/**
 * Global guard: `Authorization: Bearer <key>` on every route not marked @Public(),
 * then the route's scopes and, for tool routes, the key's tool restriction.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly verifier: KeyVerifier,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const principal = await this.authenticate(request, http.getResponse<FastifyReply>());

    const required = this.reflector.getAllAndOverride<Scope[] | undefined>(REQUIRED_SCOPES, targets) ?? [];
    const missing = required.find((scope) => !principal.scopes.has(scope));
    if (missing) throw new AppException('FORBIDDEN', `This API key lacks the '${missing}' scope`);

    const toolId = (request.params as Record<string, string> | undefined)?.tool_id;
    if (toolId && !canUseTool(principal, toolId)) {
      throw new AppException('FORBIDDEN', `This API key may not use tool '${toolId}'`);
    }
    return true;
  }

  private async authenticate(request: FastifyRequest, reply: FastifyReply) {
    const header = request.headers.authorization;
    const secret = header ? BEARER.exec(header)?.[1] : undefined;
    if (!secret) {
      reply.header('www-authenticate', 'Bearer');
      throw new AppException('UNAUTHORIZED', header ? 'Malformed Authorization header: expected "Bearer <API key>"' : 'Missing API key: send Authorization: Bearer <API key>');
    }
    const verification = await this.verifier.verify(secret);
    if (!verification.ok) {
      reply.header('www-authenticate', 'Bearer error="invalid_token"');
      const when = verification.at ? ` (at ${verification.at.toISOString()})` : '';
      throw new AppException('UNAUTHORIZED', FAILURE_MESSAGES[verification.reason] + when);
    }
    request.principal = verification.principal;
    return verification.principal;
  }
}
