import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Principal } from './principal';
import type { Scope } from './scopes';

export const PUBLIC_ROUTE = 'tos:public';
export const REQUIRED_SCOPES = 'tos:scopes';

/** No API key needed (health checks, documentation). */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);

/** The key must hold every listed scope, else 403 FORBIDDEN. */
export const RequireScopes = (...scopes: Scope[]) => SetMetadata(REQUIRED_SCOPES, scopes);

/** The verified caller of an authenticated route. */
export const CurrentPrincipal = createParamDecorator((_data: unknown, ctx: ExecutionContext): Principal => {
  return ctx.switchToHttp().getRequest<FastifyRequest>().principal!;
});

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}
