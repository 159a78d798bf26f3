/** The columns people scan in each list, and the fields `--json` offers (the API's own names). */
import type { View } from './output';

type Row = Record<string, unknown>;
const col = (header: string, field: string, flexible = false) => ({ header, value: (row: Row) => row[field], flexible });

export const TOOL_VIEW: View = {
  columns: [col('id', 'id'), col('category', 'category'), col('status', 'status'), col('version', 'version'), col('description', 'description', true)],
  fields: ['id', 'name', 'category', 'description', 'status', 'version', 'inputs', 'outputs', 'rate_limit', 'timeout', 'cacheable', 'cache_ttl', 'examples', 'documentation'],
};

export const EXECUTION_VIEW: View = {
  columns: [col('id', 'id'), col('tool', 'tool_id'), col('status', 'status'), { header: 'progress', value: (r) => `${r.progress ?? 0}%` }, col('created', 'created_at'), col('duration ms', 'duration_ms')],
  fields: ['id', 'tool_id', 'status', 'progress', 'created_at', 'started_at', 'completed_at', 'duration_ms', 'tool_version', 'mode', 'progress_message', 'input', 'result', 'error', 'input_requests'],
};

export const KEY_VIEW: View = {
  columns: [
    col('id', 'id'),
    col('name', 'name', true),
    col('type', 'type'),
    { header: 'key', value: (r) => `${r.prefix}…${r.last4}` },
    col('scopes', 'scopes', true),
    col('expires', 'expires_at'),
    col('revoked', 'revoked_at'),
    col('last used', 'last_used_at'),
  ],
  fields: ['id', 'name', 'type', 'prefix', 'last4', 'scopes', 'tool_ids', 'require_signature', 'created_at', 'expires_at', 'revoked_at', 'last_used_at', 'replaces_key_id', 'key', 'signing_secret', 'old_key'],
};

export const WORKFLOW_VIEW: View = {
  columns: [col('id', 'id'), col('name', 'name'), col('version', 'version'), col('steps', 'steps'), col('published', 'publish'), col('updated', 'updated_at')],
  fields: ['id', 'name', 'tool_id', 'version', 'publish', 'description', 'steps', 'created_at', 'updated_at', 'document'],
};

export const SECRET_VIEW: View = {
  columns: [col('name', 'name'), col('created', 'created_at'), col('updated', 'updated_at')],
  fields: ['name', 'created_at', 'updated_at'],
};

export const WORKSPACE_VIEW: View = {
  columns: [col('id', 'id'), col('format', 'format'), col('files', 'files'), col('bytes', 'bytes'), col('created', 'created_at'), col('expires', 'expires_at')],
  fields: ['id', 'format', 'files', 'bytes', 'archive_bytes', 'digest', 'created_at', 'expires_at'],
};

export const WEBHOOK_VIEW: View = {
  columns: [
    col('id', 'id'),
    col('url', 'url', true),
    col('events', 'events', true),
    { header: 'enabled', value: (r) => (r.enabled ? 'yes' : `no: ${String(r.disabled_reason ?? 'paused')}`), flexible: true },
    col('created', 'created_at'),
  ],
  fields: ['id', 'url', 'events', 'tool_ids', 'description', 'enabled', 'disabled_reason', 'previous_secret_expires_at', 'created_at', 'updated_at', 'secret'],
};

type Attempt = { status_code: number | null; latency_ms: number; error: string | null };
const lastAttempt = (r: Row): Attempt | undefined => (r.attempts as Attempt[] | undefined)?.at(-1);

export const DELIVERY_VIEW: View = {
  columns: [
    col('id', 'id'),
    col('event', 'event'),
    col('status', 'status'),
    { header: 'attempts', value: (r) => (r.attempts as unknown[] | undefined)?.length ?? 0 },
    { header: 'last answer', value: (r) => { const a = lastAttempt(r); return a ? (a.status_code ?? a.error) : null; }, flexible: true },
    { header: 'latency ms', value: (r) => lastAttempt(r)?.latency_ms },
    col('created', 'created_at'),
  ],
  fields: ['id', 'event', 'execution_id', 'status', 'created_at', 'next_attempt_at', 'delivered_at', 'last_error', 'attempts'],
};

export const ACCOUNT_VIEW: View = {
  columns: [col('id', 'id'), col('name', 'name', true), col('tier', 'tier'), col('created', 'created_at')],
  fields: ['id', 'name', 'tier', 'requests_per_minute', 'monthly_calls', 'retention_days', 'workspaces', 'workspace_bytes', 'created_at'],
};

interface UsageBody {
  tier: string;
  window: { limit: number; used: number; resets_at: string };
  month: { limit: number | null; used: number; resets_at: string };
  key?: { id: string; type: string; scopes: string[] };
}

export const USAGE_VIEW: View = {
  fields: ['tier', 'window', 'month', 'key'],
  text: (r) => {
    const u = r as unknown as UsageBody;
    return [
      `tier: ${u.tier}`,
      `requests this minute: ${u.window.used} of ${u.window.limit} (this key; resets ${u.window.resets_at})`,
      `tool calls this month: ${u.month.used} of ${u.month.limit ?? 'unlimited'} (the account; resets ${u.month.resets_at})`,
    ].join('\n') + '\n';
  },
};

export const LINK_VIEW: View = {
  fields: ['id', 'url', 'path', 'expires_at'],
  text: (r) => `${r.url}\n(works once, until ${String(r.expires_at)})\n`,
};

export const SCHEDULE_VIEW: View = {
  columns: [
    col('id', 'id'),
    { header: 'target', value: (r) => targetOf(r.target) },
    col('cron', 'cron'),
    col('timezone', 'timezone'),
    { header: 'state', value: (r) => (r.paused ? 'paused' : 'active') },
    col('next run', 'next_run_at'),
    col('paused because', 'paused_reason', true),
  ],
  fields: ['id', 'target', 'cron', 'timezone', 'overlap', 'catch_up', 'paused', 'paused_reason', 'next_run_at', 'next_runs', 'key_id', 'created_at', 'updated_at'],
};

export const SCHEDULE_RUN_VIEW: View = {
  columns: [col('tick', 'tick_at'), col('status', 'status'), col('execution', 'execution_id'), col('execution status', 'execution_status'), col('reason', 'reason', true)],
  fields: ['id', 'tick_at', 'status', 'reason', 'execution_id', 'execution_status', 'created_at', 'ended_at'],
};

export const TRIGGER_VIEW: View = {
  columns: [
    col('id', 'id'),
    { header: 'target', value: (r) => targetOf(r.target) },
    { header: 'on', value: (r) => (r.url ? `POST ${r.url} (${(r.verification as { type: string }).type})` : (r.source as { event: string }).event) },
    col('description', 'description', true),
  ],
  fields: ['id', 'target', 'verification', 'source', 'url', 'filter', 'inputs', 'description', 'key_id', 'created_at', 'updated_at', 'secret'],
};

export const TRIGGER_EVENT_VIEW: View = {
  columns: [col('at', 'at'), col('status', 'status'), col('delivery', 'delivery_id'), col('execution', 'execution_id'), col('reason', 'reason', true)],
  fields: ['id', 'at', 'status', 'accepted', 'reason', 'delivery_id', 'execution_id'],
};

function targetOf(target: unknown): string {
  const { tool, workflow } = target as { tool?: string; workflow?: string };
  return tool ? `tool ${tool}` : `workflow ${workflow}`;
}

export const UPSTREAM_AUDIT_VIEW: View = {
  columns: [
    col('time', 'created_at'),
    col('action', 'action'),
    col('upstream', 'upstream'),
    col('actor', 'actor'),
    { header: 'tool', value: (r) => (r.details as Row | undefined)?.tool_id ?? (r.details as Row | undefined)?.tool },
    { header: 'outcome', value: (r) => (r.details as Row | undefined)?.outcome },
  ],
  fields: ['id', 'action', 'actor', 'upstream_id', 'upstream', 'account_id', 'details', 'created_at'],
};

export const UPSTREAM_VIEW: View = {
  columns: [
    col('id', 'id'),
    col('name', 'name'),
    col('type', 'type'),
    { header: 'where', value: (r) => r.url ?? r.base_url ?? (r.stdio as Row | undefined)?.command ?? (r.stdio as Row | undefined)?.image, flexible: true },
    { header: 'tools', value: (r) => (r.status as Row | undefined)?.tool_count },
    col('enabled', 'enabled'),
    { header: 'last error', value: (r) => (r.status as Row | undefined)?.last_error, flexible: true },
  ],
  fields: ['id', 'name', 'type', 'transport', 'url', 'base_url', 'spec_url', 'operations', 'tools_filter', 'auth', 'timeout', 'enabled', 'shared', 'registered_by', 'stdio', 'tools', 'status', 'created_at', 'updated_at'],
};
