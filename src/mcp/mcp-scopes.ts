import type { Principal } from '../identity/principal';
import type { Scope } from '../identity/scopes';
import { EXECUTION_STATUS_TOOL, executionIdOfUri } from './mcp-execution-uri';

/** The scope each MCP method needs, as its handler checks it (requireScope); methods not listed need none (initialize, ping, server/discover, notifications). */
const METHOD_SCOPES: Readonly<Record<string, Scope>> = {
  'tools/list': 'tools:read',
  'resources/list': 'tools:read',
  'resources/templates/list': 'tools:read',
  'resources/read': 'tools:read',
  'prompts/list': 'tools:read',
  'prompts/get': 'tools:read',
  'completion/complete': 'tools:read',
  'subscriptions/listen': 'tools:read',
  'tools/call': 'tools:invoke',
  'tasks/update': 'tools:invoke',
  'tasks/get': 'executions:read',
  'tasks/list': 'executions:read',
  'tasks/result': 'executions:read',
  'tasks/cancel': 'executions:cancel',
};

/** Reading an execution, as a resource or through execution.status, needs what GET /v1/executions/{id} needs. */
function scopesOf(method: string, params: { name?: unknown; uri?: unknown } | undefined): Scope[] {
  if (method === 'tools/call' && params?.name === EXECUTION_STATUS_TOOL) return ['executions:read'];
  if (method === 'resources/read' && executionIdOfUri(params?.uri) !== undefined) return [METHOD_SCOPES[method], 'executions:read'];
  return [METHOD_SCOPES[method]];
}

/**
 * The scopes the POST's messages (one or a batch) need that the principal lacks, before any runs:
 * an OAuth client is then answered at the HTTP level (403 with the step-up challenge, as the MCP
 * authorization specification asks) rather than with a JSON-RPC error it would not act on.
 */
export function missingScopes(principal: Pick<Principal, 'scopes'>, body: unknown): Scope[] {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  const missing = new Set<Scope>();
  for (const message of messages) {
    const { method, params } = message !== null && typeof message === 'object' ? (message as { method?: unknown; params?: { name?: unknown; uri?: unknown } }) : {};
    const scopes = typeof method === 'string' && Object.hasOwn(METHOD_SCOPES, method) ? scopesOf(method, params) : [];
    for (const scope of scopes) if (!principal.scopes.has(scope)) missing.add(scope);
  }
  return [...missing];
}
