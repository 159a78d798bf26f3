import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppException } from '../common/errors';
import { PUBLIC_ROUTE, REQUIRED_SCOPES } from '../identity/auth.decorators';
import { AppConfig } from '../config/app-config';
import { canUseTool, credentialName } from '../identity/principal';
import type { Scope } from '../identity/scopes';
import { PrincipalResolver } from './principal-resolver';
import { insufficientScope } from './protected-resource';

/**
 * Global guard: a principal (PrincipalResolver) on every route not marked @Public(), then the
 * route's scopes and, for tool routes, the key's tool restriction.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  /** Each route's decorators (by controller class, then handler), read once: metadata does not change after start-up. */
  private readonly routes = new WeakMap<object, Map<object, RouteAccess>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly principals: PrincipalResolver,
    private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const { isPublic, required } = this.accessOf(context);
    if (isPublic) return true;
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const principal = await this.principals.resolve(request, http.getResponse<FastifyReply>());

    const missing = required.filter((scope) => !principal.scopes.has(scope));
    if (missing.length > 0) throw insufficientScope(request, http.getResponse<FastifyReply>(), this.config, principal, missing);

    const toolId = (request.params as Record<string, string> | undefined)?.tool_id;
    if (toolId && !canUseTool(principal, toolId)) {
      throw new AppException('FORBIDDEN', `This ${credentialName(principal)} may not use tool '${toolId}'`);
    }
    return true;
  }

  private accessOf(context: ExecutionContext): RouteAccess {
    const handler = context.getHandler();
    const controller = context.getClass();
    let handlers = this.routes.get(controller);
    if (!handlers) this.routes.set(controller, (handlers = new Map()));
    let access = handlers.get(handler);
    if (!access) {
      const targets = [handler, controller];
      access = {
        isPublic: this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets) === true,
        required: this.reflector.getAllAndOverride<Scope[] | undefined>(REQUIRED_SCOPES, targets) ?? [],
      };
      handlers.set(handler, access);
    }
    return access;
  }
}

interface RouteAccess {
  isPublic: boolean;
  required: Scope[];
}
