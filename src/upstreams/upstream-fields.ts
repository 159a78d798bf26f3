import { AppException } from '../common/errors';
import { SECRET_NAME } from '../secrets/secret-name';
import { stdioLaunchOf } from './stdio-launch';
import type { UpstreamAuth, UpstreamToolFilter } from './upstream.entity';
import type { AuditFilter } from './upstream-audit';
import { UPSTREAM_AUDIT_ACTIONS, type UpstreamAuditAction } from './upstream-audit-event.entity';
import type { OperatorUpstreamFields } from './upstreams.service';

/** Lower-case, so `<name>.<tool>` reads as one id; `workflow` is the published workflows' prefix (docs/workflows.md#publishing), `execution` the MCP execution.status tool's (docs/mcp.md#execution-status). */
export const UPSTREAM_NAME = /^(?!(?:workflow|execution)$)[a-z][a-z0-9-]{0,31}$/;
export const UPSTREAM_NAME_RULE = 'name must be 1-32 of a-z, 0-9 and -, starting with a letter, and not "workflow" or "execution"';

/** An HTTP header name (RFC 9110 token) that is not one the call sets itself. */
const API_KEY_HEADER = /^(?!(?:authorization|host|content-type|content-length|accept|cookie|connection|transfer-encoding)$)[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/i;

/** `auth` as one of its forms (the API-key header for OpenAPI upstreams only), else the 400 naming what is wrong. */
export function authOf(raw: Record<string, unknown>, openapi: boolean): UpstreamAuth {
  const keys = Object.keys(raw).sort().join(',');
  if (keys === 'none' && raw.none === true) return { none: true };
  if (keys === 'bearer_secret_name' && typeof raw.bearer_secret_name === 'string' && SECRET_NAME.test(raw.bearer_secret_name)) return { bearer_secret_name: raw.bearer_secret_name };
  if (openapi && keys === 'api_key_header,api_key_secret_name' && typeof raw.api_key_header === 'string' && API_KEY_HEADER.test(raw.api_key_header) && typeof raw.api_key_secret_name === 'string' && SECRET_NAME.test(raw.api_key_secret_name)) {
    return { api_key_header: raw.api_key_header, api_key_secret_name: raw.api_key_secret_name };
  }
  const forms = openapi ? '{ "bearer_secret_name": "<secret name>" }, { "api_key_header": "<header>", "api_key_secret_name": "<secret name>" }' : '{ "bearer_secret_name": "<secret name>" }';
  throw AppException.invalidRequest(`auth must be ${forms} or { "none": true }`, { parameter: 'auth' });
}

/** `tools` as `{ include, exclude }` lists of tool names, else the 400 naming the list. */
export function filterOf(raw: UpstreamToolFilter | undefined): UpstreamToolFilter | undefined {
  if (!raw) return undefined;
  const names = (list: unknown, member: string) => {
    if (list === undefined) return undefined;
    if (!Array.isArray(list) || list.length > 500 || !list.every((name) => typeof name === 'string' && name.length > 0 && name.length <= 128)) {
      throw AppException.invalidRequest(`tools.${member} must be a list of at most 500 tool names`, { parameter: `tools.${member}` });
    }
    return list as string[];
  };
  const include = names(raw.include, 'include');
  const exclude = names(raw.exclude, 'exclude');
  return { ...(include && { include }), ...(exclude && { exclude }) };
}

/**
 * An operator command's upstream (`tos upstreams add`): `transport: "stdio"` with a command or an
 * image (src/upstreams/stdio-launch.ts), or `"streamable-http"` with `url` and `auth`; `shared`
 * puts it in every account's catalogue. Anything else is the 400 naming the argument.
 */
export function operatorUpstreamOf(accountId: string, args: Record<string, unknown>): OperatorUpstreamFields {
  if (typeof args.name !== 'string' || !UPSTREAM_NAME.test(args.name)) throw AppException.invalidRequest(UPSTREAM_NAME_RULE, { parameter: 'name' });
  if (args.shared !== undefined && typeof args.shared !== 'boolean') throw AppException.invalidRequest('shared must be true or false', { parameter: 'shared' });
  if (args.timeout !== undefined && (!Number.isInteger(args.timeout) || (args.timeout as number) < 1 || (args.timeout as number) > 300)) throw AppException.invalidRequest('timeout must be whole seconds from 1 to 300', { parameter: 'timeout' });
  if (args.tools !== undefined && (typeof args.tools !== 'object' || args.tools === null || Array.isArray(args.tools))) throw AppException.invalidRequest('tools must be { include?, exclude? }', { parameter: 'tools' });
  const common = { accountId, name: args.name, shared: args.shared === true, tools: filterOf(args.tools as UpstreamToolFilter | undefined), timeout: args.timeout as number | undefined };
  if (args.transport === 'stdio') return { ...common, stdio: stdioLaunchOf(args) };
  if (args.transport !== 'streamable-http') throw AppException.invalidRequest('transport must be "stdio" or "streamable-http"', { parameter: 'transport' });
  if (typeof args.url !== 'string' || args.url.length > 2048) throw AppException.invalidRequest('url must be the upstream’s MCP endpoint', { parameter: 'url' });
  const auth = args.auth === undefined ? { none: true } : args.auth;
  if (typeof auth !== 'object' || auth === null || Array.isArray(auth)) throw AppException.invalidRequest('auth must be an object', { parameter: 'auth' });
  return { ...common, url: args.url, auth: authOf(auth as Record<string, unknown>, false) };
}

/** An ISO 8601 time (RFC 3339: a date, or a date and time with its offset), else the 400 naming it. */
function timeOf(value: unknown, parameter: string): Date | undefined {
  if (value === undefined) return undefined;
  const at = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2}))?$/.test(value) ? new Date(value) : undefined;
  if (!at || Number.isNaN(at.getTime())) throw AppException.invalidRequest(`${parameter} must be an ISO 8601 time, e.g. 2026-11-01T00:00:00Z`, { parameter });
  return at;
}

/**
 * The audit log's filter (docs/upstreams.md#audit-log) from the API's query or an operator
 * command's arguments: a known action, times, `since` not after `until`; else the 400 naming it.
 */
export function auditFilterOf(raw: { action?: unknown; since?: unknown; until?: unknown }, upstreamId?: string): AuditFilter {
  if (raw.action !== undefined && !(UPSTREAM_AUDIT_ACTIONS as readonly unknown[]).includes(raw.action)) {
    throw AppException.invalidRequest(`action must be one of ${UPSTREAM_AUDIT_ACTIONS.join(', ')}`, { parameter: 'action' });
  }
  const [since, until] = [timeOf(raw.since, 'since'), timeOf(raw.until, 'until')];
  if (since && until && since > until) throw AppException.invalidRequest('since must not be after until', { parameter: 'since' });
  return { action: raw.action as UpstreamAuditAction | undefined, since, until, upstreamId };
}
