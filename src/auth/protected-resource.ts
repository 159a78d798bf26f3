import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppException } from '../common/errors';
import type { AppConfig } from '../config/app-config';
import { credentialName, type Principal } from '../identity/principal';
import { SCOPES, type Scope } from '../identity/scopes';

/** The two resources a token may be bound to (RFC 8707): the MCP endpoint and the REST API. */
export const RESOURCE_PATHS = ['/v1/mcp', '/v1'] as const;
export type ResourcePath = (typeof RESOURCE_PATHS)[number];

const METADATA_PATH = '/.well-known/oauth-protected-resource';

/** The resource a request path belongs to: `/v1/mcp` for the MCP endpoint, `/v1` for the rest of the API; null elsewhere. */
export function resourcePathOf(url: string): ResourcePath | null {
  const path = url.split('?', 1)[0];
  if (path === '/v1/mcp' || path.startsWith('/v1/mcp/')) return '/v1/mcp';
  if (path === '/v1' || path.startsWith('/v1/')) return '/v1';
  return null;
}

/** A resource's identifier: the absolute URL clients reach it at. */
export function resourceIdentifier(config: AppConfig, resource: ResourcePath): string {
  return config.publicUrl + resource;
}

/** Where a resource's metadata is served (RFC 9728 §3.1: the well-known prefix before the resource's path). */
export function metadataUrl(config: AppConfig, resource: ResourcePath): string {
  return config.publicUrl + METADATA_PATH + resource;
}

/** RFC 9728 protected resource metadata: what a client needs to find the authorization server and which scopes to ask. */
export function protectedResourceMetadata(config: AppConfig, resource: ResourcePath): Record<string, unknown> {
  return {
    resource: resourceIdentifier(config, resource),
    // Optional in RFC 9728: left out, not empty, while no authorization server is configured (keys only).
    ...(config.OAUTH_ISSUER && { authorization_servers: [config.OAUTH_ISSUER] }),
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: resource === '/v1/mcp' ? 'Tool Orchestration Service (MCP)' : 'Tool Orchestration Service (REST API)',
    resource_documentation: `${config.publicUrl}/docs`,
  };
}

/** Scopes a client asks for when it has none yet: what listing and calling tools over MCP take. */
export const FIRST_SCOPES: Readonly<Record<ResourcePath, readonly Scope[]>> = {
  '/v1/mcp': ['tools:read', 'tools:invoke', 'executions:read'],
  '/v1': ['tools:read', 'tools:invoke', 'executions:read'],
};

/**
 * The `WWW-Authenticate` challenge of a 401 (RFC 9728 §5.1, RFC 6750 §3): where the resource's
 * metadata is and which scopes to ask for; `error` when a credential was sent and refused.
 */
export function bearerChallenge(config: AppConfig, resource: ResourcePath, error?: 'invalid_token'): string {
  const params = [`resource_metadata="${metadataUrl(config, resource)}"`, `scope="${FIRST_SCOPES[resource].join(' ')}"`];
  if (error) params.unshift(`error="${error}"`);
  return `Bearer ${params.join(', ')}`;
}

/** The step-up challenge of a 403 (RFC 6750 §3.1): the scopes the call needs beside those the token holds. */
export function insufficientScopeChallenge(config: AppConfig, resource: ResourcePath, scopes: readonly Scope[]): string {
  return `Bearer error="insufficient_scope", scope="${scopes.join(' ')}", resource_metadata="${metadataUrl(config, resource)}"`;
}

/**
 * 403 for a credential without a scope the route needs, with the step-up challenge (RFC 6750
 * §3.1): an OAuth client asks again for the scopes it holds plus the missing ones.
 */
export function insufficientScope(request: FastifyRequest, reply: FastifyReply, config: AppConfig, principal: Principal, missing: readonly Scope[]): AppException {
  const wanted = [...new Set([...principal.scopes, ...missing])];
  reply.header('www-authenticate', insufficientScopeChallenge(config, resourcePathOf(request.url) ?? '/v1', wanted));
  return new AppException('FORBIDDEN', `This ${credentialName(principal)} lacks the '${missing.join("', '")}' scope${missing.length > 1 ? 's' : ''}`, {
    details: { error: 'insufficient_scope', missing_scopes: missing },
  });
}
