import { ERROR_STATUS } from '../common/errors';
import { EXECUTION_STATUSES } from '../executions/engine/execution.entity';
import { TOOL_CATEGORIES, TOOL_STATUSES } from '../tools/sdk';
import { UPSTREAM_AUDIT_ACTIONS } from '../upstreams/upstream-audit-event.entity';
import { DELIVERY_STATUSES } from '../webhooks/webhook-delivery.entity';
import { EXECUTION_EVENTS, SUBSCRIPTION_EVENTS, WEBHOOK_EVENTS } from '../webhooks/webhook-outbox';

/** OpenAPI 3.1 schema objects are JSON Schema 2020-12: tool schemas go in as they are. */
export type SchemaObject = Record<string, unknown>;

export const ref = (name: string): SchemaObject => ({ $ref: `#/components/schemas/${name}` });

const nullable = (type: string, extra: SchemaObject = {}): SchemaObject => ({ type: [type, 'null'], ...extra });
const timestamp = { type: 'string', format: 'date-time' };

/** docs/API.md#envelope: every error, the framework's included. */
const ErrorBody: SchemaObject = {
  type: 'object',
  required: ['code', 'message', 'retryable'],
  properties: {
    code: { type: 'string', enum: Object.keys(ERROR_STATUS) },
    message: { type: 'string' },
    details: { type: 'object', additionalProperties: true, description: 'For input errors: parameter, expected, received.' },
    suggestion: { type: 'string' },
    support: { type: 'string' },
    retryable: { type: 'boolean' },
    retry_after: { type: 'integer', description: 'Seconds; equals the Retry-After header (RATE_LIMITED).' },
  },
};

const Timing: SchemaObject = {
  type: 'object',
  required: ['total_ms', 'execution_ms', 'processing_ms'],
  properties: { total_ms: { type: 'number' }, execution_ms: { type: 'number' }, processing_ms: { type: 'number' } },
};

const CacheInfo: SchemaObject = {
  type: 'object',
  required: ['hit', 'ttl'],
  properties: { hit: { type: 'boolean' }, ttl: { type: 'integer', description: 'Seconds left.' } },
};

const ToolSummary: SchemaObject = {
  type: 'object',
  required: ['id', 'name', 'category', 'description', 'status', 'version', 'inputs', 'outputs', 'rate_limit', 'timeout'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    category: { type: 'string', enum: [...TOOL_CATEGORIES] },
    description: { type: 'string' },
    status: { type: 'string', enum: [...TOOL_STATUSES] },
    version: { type: 'string' },
    inputs: { type: 'object', additionalProperties: { type: 'object' } },
    outputs: { type: 'object', additionalProperties: { type: 'object' } },
    rate_limit: { type: 'string', examples: ['100 calls/min'] },
    timeout: { type: 'string', examples: ['30s'] },
    cacheable: { type: 'boolean' },
    cache_ttl: { type: 'integer' },
  },
};

const ExecutionSummary: SchemaObject = {
  type: 'object',
  required: ['id', 'tool_id', 'status', 'progress'],
  properties: {
    id: { type: 'string', pattern: '^exec_' },
    tool_id: { type: 'string' },
    status: { type: 'string', enum: [...EXECUTION_STATUSES] },
    progress: { type: 'integer', minimum: 0, maximum: 100 },
    created_at: nullable('string', { format: 'date-time' }),
    started_at: nullable('string', { format: 'date-time' }),
    completed_at: nullable('string', { format: 'date-time' }),
    duration_ms: nullable('number'),
  },
};

const KeyRecord: SchemaObject = {
  type: 'object',
  required: ['id', 'name', 'type', 'prefix', 'last4', 'scopes', 'created_at'],
  properties: {
    id: { type: 'string', pattern: '^key_' },
    name: { type: 'string' },
    type: { type: 'string', enum: ['user', 'service', 'temporary'] },
    prefix: { type: 'string' },
    last4: { type: 'string' },
    scopes: { type: 'array', items: { type: 'string' } },
    tool_ids: nullable('array', { items: { type: 'string' } }),
    created_at: timestamp,
    expires_at: nullable('string', { format: 'date-time' }),
    revoked_at: nullable('string', { format: 'date-time' }),
    last_used_at: nullable('string', { format: 'date-time' }),
    replaces_key_id: nullable('string'),
    require_signature: { type: 'boolean', description: 'Requests made with the key must be signed (X-Timestamp, X-Signature).' },
  },
};

const page = (member: string, item: SchemaObject): SchemaObject => ({
  type: 'object',
  required: [member, 'total', 'limit', 'offset'],
  properties: { [member]: { type: 'array', items: item }, total: { type: 'integer' }, limit: { type: 'integer' }, offset: { type: 'integer' } },
});

/** docs/API.md#webhooks */
const Webhook: SchemaObject = {
  type: 'object',
  required: ['id', 'url', 'events', 'tool_ids', 'description', 'enabled', 'disabled_reason', 'previous_secret_expires_at', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string' },
    url: { type: 'string', format: 'uri' },
    events: { type: 'array', items: { type: 'string', enum: WEBHOOK_EVENTS } },
    tool_ids: nullable('array', { items: { type: 'string' }, description: 'Only these tools’ executions; null: every tool.' }),
    description: nullable('string'),
    enabled: { type: 'boolean' },
    disabled_reason: nullable('string', { description: 'Why the service disabled it (410 Gone, the retry schedule exhausted).' }),
    previous_secret_expires_at: nullable('string', { format: 'date-time', description: 'Until then the secret before the last rotation signs too.' }),
    created_at: timestamp,
    updated_at: timestamp,
  },
};

/** docs/upstreams.md#audit-log: one event of the upstreams' audit log. */
const UpstreamAuditEvent: SchemaObject = {
  type: 'object',
  required: ['id', 'action', 'actor', 'upstream_id', 'upstream', 'account_id', 'details', 'created_at'],
  properties: {
    id: { type: 'string', pattern: '^uae_' },
    action: { type: 'string', enum: [...UPSTREAM_AUDIT_ACTIONS] },
    actor: { type: 'string', description: 'An API key’s id, a console session’s id, `oauth:<client>:<account>`, or `operator`.' },
    upstream_id: { type: 'string', pattern: '^up_' },
    upstream: { type: 'string', description: 'The upstream’s name when the event happened.' },
    account_id: nullable('string', { description: 'null for an operator-wide upstream’s registration and changes.' }),
    details: { type: 'object', description: 'Names and settings, never a secret’s value, a header’s value or a call’s input; `upstream.called`: `tool_id`, `execution_id`, `outcome`.' },
    created_at: timestamp,
  },
};

/** docs/upstreams.md: an MCP server or OpenAPI operations an account registered, as the API shows it. */
const Upstream: SchemaObject = {
  type: 'object',
  required: ['id', 'name', 'type', 'auth', 'timeout', 'enabled', 'tools', 'status', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string', pattern: '^up_' },
    name: { type: 'string', description: 'Its tools are `<name>.<tool>`.' },
    type: { type: 'string', enum: ['mcp', 'openapi'] },
    transport: { type: 'string', enum: ['streamable-http'], description: 'MCP upstreams.' },
    url: { type: 'string', format: 'uri', description: 'MCP upstreams: the endpoint.' },
    tools_filter: { type: 'object', description: 'MCP upstreams: `{ include, exclude }` as registered.' },
    base_url: { type: 'string', format: 'uri', description: 'OpenAPI upstreams: the API’s base URL.' },
    spec_url: nullable('string', { format: 'uri', description: 'OpenAPI upstreams: where the document is fetched; null when it was given inline.' }),
    operations: { type: 'array', items: { type: 'string' }, description: 'OpenAPI upstreams: the operations selected.' },
    auth: { type: 'object', description: 'The secret’s name only, never a value.' },
    timeout: { type: 'integer', description: 'Seconds a call may take.' },
    enabled: { type: 'boolean' },
    tools: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'id', 'enabled'],
        properties: { name: { type: 'string' }, id: { type: 'string' }, enabled: { type: 'boolean' }, operation: { type: 'string', description: 'OpenAPI upstreams: `METHOD /path`.' }, description: { type: 'string' } },
      },
    },
    status: {
      type: 'object',
      required: ['tool_count', 'last_contact_at', 'last_error', 'latency_ms'],
      properties: { tool_count: { type: 'integer' }, last_contact_at: nullable('string', { format: 'date-time' }), last_error: nullable('string'), latency_ms: nullable('integer') },
    },
    created_at: timestamp,
    updated_at: timestamp,
  },
};

/** docs/workflows.md */
const WorkflowSummary: SchemaObject = {
  type: 'object',
  required: ['id', 'name', 'tool_id', 'version', 'publish', 'steps', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string', pattern: '^wf_' },
    name: { type: 'string' },
    tool_id: { type: 'string', description: '`workflow.<name>`: its tool id when published, and its runs’ tool_id.' },
    version: { type: 'integer', minimum: 1 },
    publish: { type: 'boolean' },
    description: { type: 'string' },
    steps: { type: 'integer', description: 'How many steps the document has.' },
    created_at: timestamp,
    updated_at: timestamp,
  },
};

const WorkflowDocument: SchemaObject = { type: 'object', description: 'The document as stored, defaults filled in (docs/workflows.md#the-document).', additionalProperties: true };

const WebhookDelivery: SchemaObject = {
  type: 'object',
  required: ['id', 'event', 'execution_id', 'status', 'created_at', 'next_attempt_at', 'delivered_at', 'last_error', 'attempts'],
  properties: {
    id: { type: 'string', description: 'The `webhook-id` header: the same on every attempt and redelivery.' },
    event: { type: 'string', enum: [...WEBHOOK_EVENTS, 'ping'] },
    execution_id: nullable('string'),
    status: { type: 'string', enum: DELIVERY_STATUSES },
    created_at: timestamp,
    next_attempt_at: nullable('string', { format: 'date-time' }),
    delivered_at: nullable('string', { format: 'date-time' }),
    last_error: nullable('string'),
    attempts: {
      type: 'array',
      items: {
        type: 'object',
        required: ['at', 'status_code', 'latency_ms', 'error', 'response_excerpt'],
        properties: { at: timestamp, status_code: nullable('integer'), latency_ms: { type: 'integer' }, error: nullable('string'), response_excerpt: nullable('string', { maxLength: 1024 }) },
      },
    },
  },
};

/** docs/orchestration.md: what a schedule or trigger starts. */
const Target: SchemaObject = {
  type: 'object',
  required: ['inputs'],
  description: 'Exactly one of `tool` and `workflow` (its id, however the request named it).',
  properties: { tool: { type: 'string' }, workflow: { type: 'string' }, inputs: { type: 'object', additionalProperties: true } },
};

/** docs/orchestration.md#schedules */
const Schedule: SchemaObject = {
  type: 'object',
  required: ['id', 'target', 'cron', 'timezone', 'overlap', 'catch_up', 'paused', 'paused_reason', 'next_run_at', 'next_runs', 'key_id', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string' },
    target: Target,
    cron: { type: 'string' },
    timezone: { type: 'string' },
    overlap: { type: 'string', enum: ['skip', 'queue', 'allow'] },
    catch_up: { type: 'string', enum: ['none', 'last'] },
    paused: { type: 'boolean' },
    paused_reason: nullable('string', { description: 'Why the service paused it (its key revoked or expired).' }),
    next_run_at: nullable('string', { format: 'date-time' }),
    next_runs: { type: 'array', items: timestamp, maxItems: 5 },
    key_id: { type: 'string', description: 'The key it runs as.' },
    created_at: timestamp,
    updated_at: timestamp,
  },
};

const ScheduleRun: SchemaObject = {
  type: 'object',
  required: ['id', 'tick_at', 'status', 'reason', 'execution_id', 'execution_status', 'created_at', 'ended_at'],
  properties: {
    id: { type: 'string' },
    tick_at: timestamp,
    status: { type: 'string', enum: ['pending', 'started', 'skipped', 'missed', 'refused', 'failed'] },
    reason: nullable('string'),
    execution_id: nullable('string'),
    execution_status: nullable('string'),
    created_at: timestamp,
    ended_at: nullable('string', { format: 'date-time' }),
  },
};

/** docs/orchestration.md#triggers */
const Trigger: SchemaObject = {
  type: 'object',
  required: ['id', 'target', 'verification', 'source', 'url', 'filter', 'inputs', 'description', 'key_id', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string' },
    target: Target,
    verification: { type: ['object', 'null'], properties: { type: { type: 'string', enum: ['github', 'gitlab', 'standard_webhooks', 'bearer'] } } },
    source: { type: ['object', 'null'], properties: { event: { type: 'string' }, tool_ids: nullable('array', { items: { type: 'string' } }) } },
    url: nullable('string', { description: 'Path of the inbound URL (POST); null for an internal trigger.' }),
    filter: nullable('string'),
    inputs: { type: ['object', 'null'], additionalProperties: { type: 'string' } },
    description: nullable('string'),
    key_id: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
  },
};

const TriggerEvent: SchemaObject = {
  type: 'object',
  required: ['id', 'at', 'status', 'accepted', 'reason', 'delivery_id', 'execution_id'],
  properties: {
    id: { type: 'string' },
    at: timestamp,
    status: { type: 'string', enum: ['pending', 'started', 'filtered', 'refused', 'failed'] },
    accepted: { type: 'boolean' },
    reason: nullable('string'),
    delivery_id: nullable('string'),
    execution_id: nullable('string'),
  },
};

/** The body of every webhook request (SPEC §6.3), with the `data` of an execution's event or of a subscription's. */
const webhookEvent = (events: readonly string[], data: SchemaObject): SchemaObject => ({
  type: 'object',
  required: ['event', 'timestamp', 'data', 'signature'],
  properties: {
    event: { type: 'string', enum: [...events] },
    timestamp: timestamp,
    data,
    signature: { type: 'string', pattern: '^sha256=[0-9a-f]{64}$', description: 'Equals X-Signature (its first signature during a rotation).' },
  },
});

const WebhookEvent = webhookEvent(Object.values(EXECUTION_EVENTS), {
  type: 'object',
  required: ['execution_id', 'tool_id', 'status', 'result'],
  properties: {
    execution_id: { type: 'string' },
    tool_id: { type: 'string' },
    status: { type: 'string', enum: EXECUTION_STATUSES },
    result: { description: 'The result (completed), the error (failed), the questions (input_required), null (cancelled); over 64 KiB: { truncated, size_bytes, url }.' },
  },
});

/** `webhook.disabled`: sent to the account's other subscriptions that take it when the service disables one. */
const WebhookDisabledEvent = webhookEvent(SUBSCRIPTION_EVENTS, {
  type: 'object',
  required: ['webhook_id', 'url', 'reason'],
  properties: { webhook_id: { type: 'string' }, url: { type: 'string', format: 'uri' }, reason: { type: 'string' } },
});

/** Shared components; per-tool schemas are added beside them. */
export const COMPONENT_SCHEMAS: Record<string, SchemaObject> = {
  ErrorBody,
  ErrorEnvelope: { type: 'object', required: ['error'], properties: { error: ref('ErrorBody') } },
  InvocationError: {
    type: 'object',
    required: ['status', 'execution_id', 'error'],
    properties: { status: { type: 'string', enum: ['error', 'cancelled'] }, execution_id: { type: 'string' }, error: ref('ErrorBody') },
  },
  Timing,
  CacheInfo,
  InvocationQueued: {
    type: 'object',
    required: ['status', 'execution_id', 'message', 'status_url'],
    properties: { status: { const: 'queued' }, execution_id: { type: 'string' }, message: { type: 'string' }, status_url: { type: 'string' } },
  },
  InvokeOptions: {
    type: 'object',
    properties: {
      timeout: { type: 'integer', minimum: 1, maximum: 300, description: 'Seconds; default the tool’s own.' },
      async: { type: 'boolean', default: false },
      cache: { type: 'boolean', default: true },
    },
  },
  ToolSummary,
  ToolDetail: {
    allOf: [
      ref('ToolSummary'),
      {
        type: 'object',
        required: ['examples', 'documentation'],
        properties: { examples: { type: 'array', items: { type: 'object' } }, documentation: { type: 'string', format: 'uri' } },
      },
    ],
  },
  ToolList: page('tools', ref('ToolSummary')),
  ExecutionSummary,
  Execution: {
    allOf: [
      ref('ExecutionSummary'),
      {
        type: 'object',
        properties: {
          tool_version: { type: 'string' },
          mode: { type: 'string', enum: ['sync', 'async'] },
          kind: { type: 'string', enum: ['tool', 'workflow'], description: '`workflow`: a workflow run, whose steps are its child executions (docs/workflows.md).' },
          parent_execution_id: { type: 'string', description: 'A workflow step: the run it belongs to.' },
          step_key: { type: 'string', description: 'A workflow step: its step id, `[item]` of a for_each, `#attempt` of a retry.' },
          progress_message: { type: 'string' },
          input: { type: 'object' },
          result: { type: 'object' },
          error: ref('ErrorBody'),
          schedule_id: { type: 'string', description: 'The schedule whose tick started it (docs/orchestration.md).' },
          trigger_id: { type: 'string', description: 'The trigger whose event started it.' },
          upstream_task: {
            type: 'object',
            description: 'The upstream MCP task a call of an upstream tool runs as (docs/upstreams.md#upstream-tasks).',
            required: ['upstream_id', 'task_id'],
            properties: { upstream_id: { type: 'string' }, task_id: { type: 'string' } },
          },
        },
      },
    ],
  },
  ExecutionList: {
    type: 'object',
    description: 'One shape for offset and cursor paging: `executions` and `items` are the same page (clients written for either name find it); `offset` is null on a cursor page; `pagination.after` continues either by cursor.',
    required: ['executions', 'items', 'total', 'limit', 'offset', 'pagination'],
    properties: {
      executions: { type: 'array', items: ref('ExecutionSummary') },
      items: { type: 'array', items: ref('ExecutionSummary') },
      total: { type: 'integer' },
      limit: { type: 'integer' },
      offset: nullable('integer'),
      pagination: { type: 'object', required: ['after', 'has_more'], properties: { after: nullable('string'), has_more: { type: 'boolean' } } },
    },
  },
  ExecutionCancelled: {
    type: 'object',
    required: ['status', 'execution_id', 'message'],
    properties: { status: { const: 'cancelled' }, execution_id: { type: 'string' }, message: { type: 'string' } },
  },
  KeyRecord,
  KeyWithSecret: {
    allOf: [
      ref('KeyRecord'),
      {
        type: 'object',
        required: ['key'],
        properties: {
          key: { type: 'string', description: 'The secret, shown once.' },
          signing_secret: { type: 'string', pattern: '^sk_sig_', description: 'Keys that require signed requests: the signing secret, shown once.' },
        },
      },
    ],
  },
  KeyList: page('keys', ref('KeyRecord')),
  Webhook,
  WebhookWithSecret: { allOf: [ref('Webhook'), { type: 'object', required: ['secret'], properties: { secret: { type: 'string', pattern: '^whsec_', description: 'The signing secret, shown once.' } } }] },
  WebhookList: page('webhooks', ref('Webhook')),
  Upstream,
  UpstreamAuditEvent,
  UpstreamAuditList: page('events', ref('UpstreamAuditEvent')),
  WebhookDelivery,
  WebhookDeliveryList: page('deliveries', ref('WebhookDelivery')),
  WebhookEvent,
  WebhookDisabledEvent,
  Schedule,
  ScheduleList: page('schedules', ref('Schedule')),
  ScheduleRun,
  ScheduleRunList: page('runs', ref('ScheduleRun')),
  Trigger,
  TriggerWithSecret: { allOf: [ref('Trigger'), { type: 'object', properties: { secret: { type: 'string', description: 'An inbound trigger’s secret, shown once.' } } }] },
  TriggerList: page('triggers', ref('Trigger')),
  TriggerEvent,
  TriggerEventList: page('events', ref('TriggerEvent')),
  TriggerEventAnswer: {
    type: 'object',
    required: ['accepted', 'event_id', 'execution_id'],
    properties: { accepted: { type: 'boolean' }, event_id: { type: 'string' }, execution_id: nullable('string'), reason: { type: 'string' }, duplicate: { const: true } },
  },
  WorkflowSummary,
  Workflow: { allOf: [ref('WorkflowSummary'), { type: 'object', required: ['document'], properties: { document: WorkflowDocument } }] },
  WorkflowList: page('workflows', ref('WorkflowSummary')),
  WorkflowVersion: {
    type: 'object',
    required: ['workflow_id', 'version', 'created_at', 'document'],
    properties: { workflow_id: { type: 'string' }, version: { type: 'integer' }, created_at: timestamp, document: WorkflowDocument },
  },
  WorkflowRunGraph: {
    type: 'object',
    required: ['run', 'workflow_id', 'version', 'steps'],
    description: 'A run as a DAG (docs/workflows.md#a-runs-graph): its execution, the version it is pinned to, each step with its edges (`needs`), status and calls.',
    properties: {
      run: ref('Execution'),
      workflow_id: { type: 'string' },
      version: { type: 'integer' },
      steps: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'tool', 'needs', 'continue_on_error', 'status', 'calls'],
          properties: {
            id: { type: 'string' },
            tool: { type: 'string' },
            needs: { type: 'array', items: { type: 'string' } },
            if: { type: 'string' },
            for_each: { type: 'string' },
            continue_on_error: { type: 'boolean' },
            status: { type: 'string', enum: ['pending', 'running', 'input_required', 'success', 'error', 'skipped'] },
            error: { type: 'object', additionalProperties: true },
            calls: {
              type: 'array',
              items: {
                type: 'object',
                required: ['execution_id', 'step_key', 'status', 'progress', 'duration_ms'],
                properties: { execution_id: { type: 'string' }, step_key: { type: 'string' }, status: { type: 'string' }, progress: { type: 'integer' }, duration_ms: nullable('integer') },
              },
            },
          },
        },
      },
    },
  },
  WorkflowRunAnswer: {
    type: 'object',
    required: ['status', 'execution_id'],
    description: 'Ended (200, or the error’s status): `result` is the outputs, or `error` names the step. Still going (202): the run’s execution view and `status_url`.',
    properties: {
      status: { type: 'string', enum: ['running', 'input_required', 'success', 'error', 'cancelled'] },
      execution_id: { type: 'string' },
      result: { type: 'object', additionalProperties: true },
      error: { type: 'object', additionalProperties: true },
      status_url: { type: 'string' },
    },
  },
  Usage: {
    type: 'object',
    required: ['tier', 'window', 'month'],
    properties: {
      tier: { type: 'string', enum: ['free', 'pro', 'enterprise'] },
      window: { type: 'object', description: 'The calling key’s rolling 60 s request window.', required: ['limit', 'used', 'resets_at'], properties: { limit: { type: 'integer' }, used: { type: 'integer' }, resets_at: { type: 'string', format: 'date-time' } } },
      month: { type: 'object', description: 'The account’s tool calls this calendar month (UTC); limit null = no cap.', required: ['limit', 'used', 'resets_at'], properties: { limit: nullable('integer'), used: { type: 'integer' }, resets_at: { type: 'string', format: 'date-time' } } },
      key: {
        type: 'object',
        description: 'The calling key (for a console session: the session).',
        required: ['id', 'type', 'account_id', 'scopes', 'tool_ids', 'expires_at'],
        properties: { id: { type: 'string' }, type: { type: 'string' }, account_id: { type: 'string' }, scopes: { type: 'array', items: { type: 'string' } }, tool_ids: nullable('array', { items: { type: 'string' } }), expires_at: nullable('string', { format: 'date-time' }) },
      },
    },
  },
  SignInLink: {
    type: 'object',
    required: ['id', 'url', 'path', 'expires_at'],
    properties: { id: { type: 'string' }, url: { type: 'string', format: 'uri', description: 'Works once, until expires_at; the token is in the fragment.' }, path: { type: 'string' }, expires_at: { type: 'string', format: 'date-time' } },
  },
  ConsoleSession: {
    type: 'object',
    required: ['id', 'scopes', 'tool_ids', 'member_id', 'created_at', 'last_seen_at', 'expires_at', 'idle_expires_at', 'revoked_at'],
    properties: {
      id: { type: 'string' },
      scopes: { type: 'array', items: { type: 'string' } },
      tool_ids: { type: ['array', 'null'], items: { type: 'string' } },
      member_id: nullable('string', { description: 'The member a single sign-on opened it for; null for a sign-in link.' }),
      user_agent: nullable('string'),
      created_at: { type: 'string', format: 'date-time' },
      last_seen_at: { type: 'string', format: 'date-time' },
      expires_at: { type: 'string', format: 'date-time' },
      idle_expires_at: { type: 'string', format: 'date-time' },
      revoked_at: nullable('string'),
    },
  },
  ConsoleMember: {
    type: 'object',
    description: 'Someone single sign-on made a member of the account (docs/authorization.md#members).',
    required: ['id', 'issuer', 'subject', 'email', 'role', 'created_at', 'last_sign_in_at'],
    properties: {
      id: { type: 'string' },
      issuer: { type: 'string', description: 'The identity provider.' },
      subject: { type: 'string', description: "The user's `sub` at the provider." },
      email: nullable('string'),
      role: { type: 'string', enum: ['owner', 'member', 'viewer'] },
      created_at: { type: 'string', format: 'date-time' },
      last_sign_in_at: { type: 'string', format: 'date-time' },
    },
  },
  ConsoleSignedIn: {
    type: 'object',
    required: ['session', 'account', 'csrf_token'],
    properties: {
      session: ref('ConsoleSession'),
      account: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, tier: { type: 'string' } } },
      csrf_token: { type: 'string', description: 'Send it as X-CSRF-Token on every state-changing request of this session.' },
    },
  },
  ProtectedResourceMetadata: {
    type: 'object',
    description: 'RFC 9728 protected resource metadata (docs/authorization.md).',
    required: ['resource', 'scopes_supported', 'bearer_methods_supported'],
    properties: {
      resource: { type: 'string', format: 'uri' },
      authorization_servers: { type: 'array', items: { type: 'string', format: 'uri' } },
      scopes_supported: { type: 'array', items: { type: 'string' } },
      bearer_methods_supported: { type: 'array', items: { const: 'header' } },
      resource_name: { type: 'string' },
      resource_documentation: { type: 'string', format: 'uri' },
    },
  },
};

/** What each fixed route answers on success, by `METHOD path`; routes without an entry get the generator's bare answer. */
export const SUCCESS_SCHEMAS: Record<string, SchemaObject> = {
  'GET /v1/tools': ref('ToolList'),
  'GET /api/skill/tools': ref('ToolList'),
  'GET /v1/tools/{tool_id}': ref('ToolDetail'),
  'GET /v1/executions': ref('ExecutionList'),
  'GET /v1/executions/{execution_id}': ref('Execution'),
  'GET /api/skill/status/{execution_id}': ref('Execution'),
  'DELETE /v1/executions/{execution_id}': ref('ExecutionCancelled'),
  'GET /v1/keys': ref('KeyList'),
  'POST /v1/keys': ref('KeyWithSecret'),
  'GET /v1/keys/{key_id}': ref('KeyRecord'),
  'DELETE /v1/keys/{key_id}': ref('KeyRecord'),
  'POST /v1/keys/{key_id}/regenerate': ref('KeyWithSecret'),
  'POST /v1/keys/{key_id}/rotate': ref('KeyWithSecret'),
  'POST /v1/webhooks': ref('WebhookWithSecret'),
  'POST /v1/upstreams': ref('Upstream'),
  'GET /v1/upstreams': { type: 'object', required: ['upstreams', 'max_upstreams'], properties: { upstreams: { type: 'array', items: ref('Upstream') }, max_upstreams: { type: 'integer' } } },
  'GET /v1/upstreams/{upstream_id}': ref('Upstream'),
  'PATCH /v1/upstreams/{upstream_id}': ref('Upstream'),
  'POST /v1/upstreams/{upstream_id}/refresh': ref('Upstream'),
  'GET /v1/upstreams/audit': ref('UpstreamAuditList'),
  'GET /v1/upstreams/{upstream_id}/audit': ref('UpstreamAuditList'),
  'GET /v1/webhooks': ref('WebhookList'),
  'GET /v1/webhooks/{webhook_id}': ref('Webhook'),
  'PATCH /v1/webhooks/{webhook_id}': ref('Webhook'),
  'POST /v1/webhooks/{webhook_id}/rotate-secret': ref('WebhookWithSecret'),
  'POST /v1/webhooks/{webhook_id}/test': ref('WebhookDelivery'),
  'GET /v1/webhooks/{webhook_id}/deliveries': ref('WebhookDeliveryList'),
  'POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver': ref('WebhookDelivery'),
  'POST /v1/schedules': ref('Schedule'),
  'GET /v1/schedules': ref('ScheduleList'),
  'GET /v1/schedules/{schedule_id}': ref('Schedule'),
  'PATCH /v1/schedules/{schedule_id}': ref('Schedule'),
  'GET /v1/schedules/{schedule_id}/runs': ref('ScheduleRunList'),
  'POST /v1/triggers': ref('TriggerWithSecret'),
  'GET /v1/triggers': ref('TriggerList'),
  'GET /v1/triggers/{trigger_id}': ref('Trigger'),
  'GET /v1/triggers/{trigger_id}/events': ref('TriggerEventList'),
  'POST /v1/triggers/{trigger_id}/events': ref('TriggerEventAnswer'),
  'POST /v1/workflows': ref('Workflow'),
  'GET /v1/workflows': ref('WorkflowList'),
  'GET /v1/workflows/{workflow_id}': ref('Workflow'),
  'PUT /v1/workflows/{workflow_id}': ref('Workflow'),
  'DELETE /v1/workflows/{workflow_id}': { type: 'object', required: ['status', 'workflow_id'], properties: { status: { const: 'deleted' }, workflow_id: { type: 'string' } } },
  'GET /v1/workflows/{workflow_id}/versions': { type: 'object', required: ['versions'], properties: { versions: { type: 'array', items: ref('WorkflowVersion') } } },
  'GET /v1/workflows/{workflow_id}/versions/{version}': ref('WorkflowVersion'),
  'POST /v1/workflows/{workflow_id}/runs': ref('WorkflowRunAnswer'),
  'GET /v1/workflows/{workflow_id}/runs': page('runs', ref('ExecutionSummary')),
  'GET /v1/workflows/runs/{run_id}': ref('WorkflowRunGraph'),
  'DELETE /v1/tools/{tool_id}/cache': { type: 'object', required: ['tool_id', 'dropped'], properties: { tool_id: { type: 'string' }, dropped: { type: 'integer' } } },
  'GET /v1/usage': ref('Usage'),
  'POST /v1/console/links': ref('SignInLink'),
  'GET /v1/console/sessions': { type: 'object', required: ['sessions', 'total'], properties: { sessions: { type: 'array', items: ref('ConsoleSession') }, total: { type: 'integer' } } },
  'DELETE /v1/console/sessions/{session_id}': ref('ConsoleSession'),
  'GET /v1/console/members': { type: 'object', required: ['members', 'total'], properties: { members: { type: 'array', items: ref('ConsoleMember') }, total: { type: 'integer' } } },
  'GET /console/sso': { type: 'object', required: ['provider', 'start_url'], properties: { provider: { type: 'string' }, start_url: { type: 'string' } } },
  'POST /console/session': ref('ConsoleSignedIn'),
  'GET /console/session': ref('ConsoleSignedIn'),
  'GET /.well-known/oauth-protected-resource': ref('ProtectedResourceMetadata'),
  'GET /.well-known/oauth-protected-resource/v1/mcp': ref('ProtectedResourceMetadata'),
  'GET /.well-known/oauth-protected-resource/v1': ref('ProtectedResourceMetadata'),
  'GET /v1/mcp/server-card': { type: 'object', required: ['$schema', 'name', 'version', 'remotes'], description: 'The MCP Server Card (SEP-2127), media type application/mcp-server+json.' },
  'GET /.well-known/mcp/server-card.json': { type: 'object', required: ['$schema', 'name', 'version', 'remotes'], description: 'The MCP Server Card, at the well-known path.' },
  'GET /.well-known/mcp/catalog.json': { type: 'object', required: ['specVersion', 'entries'], description: "This host's MCP Catalog, pointing at the Server Card." },
  'GET /healthz': { type: 'object', properties: { status: { const: 'ok' } } },
  'GET /readyz': {
    type: 'object',
    required: ['status', 'checks', 'backends'],
    properties: {
      status: { type: 'string', enum: ['ready', 'unavailable'] },
      checks: { type: 'object', additionalProperties: { type: 'string' }, description: '`ok` or `failing: <reason>` per check.' },
      backends: { type: 'object', additionalProperties: { type: 'string' }, description: 'What each part runs on in this configuration.' },
    },
  },
  'GET /v1/openapi.json': { type: 'object', description: 'This document.' },
  'POST /v1/mcp': { type: 'object', description: 'A JSON-RPC 2.0 answer (or an array of them); with a progress token, an SSE stream.' },
};

/** Routes that answer something other than JSON. */
export const SUCCESS_MEDIA: Record<string, Record<string, { schema: SchemaObject }>> = {
  'GET /v1/tools/{tool_id}/docs': { 'text/markdown': { schema: { type: 'string' } } },
  'GET /v1/executions/{execution_id}/events': {
    'text/event-stream': { schema: { type: 'string', description: '`status` and `progress` events, then one `result` event with the execution record.' } },
  },
  'GET /v1/workflows/runs/{run_id}/events': {
    'text/event-stream': { schema: { type: 'string', description: '`graph` events, each the whole WorkflowRunGraph, the last (id `end`) once the run has ended.' } },
  },
  'GET /docs': { 'text/html': { schema: { type: 'string' } } },
  'GET /console': { 'text/html': { schema: { type: 'string' } } },
  'GET /console/assets/{name}': { 'text/css': { schema: { type: 'string' } }, 'text/javascript': { schema: { type: 'string' } } },
  'GET /docs/{asset}': { 'text/css': { schema: { type: 'string' } }, 'text/javascript': { schema: { type: 'string' } }, 'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } } },
};

const header = (description: string, schema: SchemaObject = { type: 'string' }) => ({ description, schema });

/** docs/API.md#headers: on every response. */
export const RESPONSE_HEADERS: Record<string, ReturnType<typeof header>> = {
  'X-RateLimit-Limit': header('Requests per minute of the tightest window this request was counted in.', { type: 'integer' }),
  'X-RateLimit-Remaining': header('Requests left in that window.', { type: 'integer' }),
  'X-RateLimit-Reset': header('Unix seconds when a slot frees.', { type: 'integer' }),
  'X-Request-ID': header('Yours when you sent a sane one, else generated.'),
  'API-Version': header('Always 1.0.'),
  'Strict-Transport-Security': header('max-age=31536000'),
  'X-Content-Type-Options': header('nosniff'),
  'X-Frame-Options': header('DENY'),
  'X-XSS-Protection': header('1; mode=block'),
};

/** Added on 429. */
export const RETRY_HEADERS: Record<string, ReturnType<typeof header>> = {
  'Retry-After': header('Seconds until a retry can pass; equals the body’s retry_after.', { type: 'integer' }),
  'X-RateLimit-Retry-After': header('Same as Retry-After.', { type: 'integer' }),
};

/** OpenAPI 3.1's `webhooks`: what the service POSTs to a subscription, per event (docs/API.md#webhooks). */
export const WEBHOOK_OPERATIONS: Record<string, unknown> = Object.fromEntries(
  WEBHOOK_EVENTS.map((event) => [
    event,
    {
      post: {
        summary: `${event}, POSTed to each subscription that takes it`,
        parameters: ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'X-Signature', 'X-Timestamp'].map((name) => ({ name, in: 'header', required: true, schema: { type: 'string' } })),
        requestBody: { required: true, content: { 'application/json': { schema: ref((SUBSCRIPTION_EVENTS as readonly string[]).includes(event) ? 'WebhookDisabledEvent' : 'WebhookEvent') } } },
        responses: { '200': { description: 'Any 2xx: delivered. 410: the subscription is disabled. Anything else, or no answer in 10 s: retried.' } },
      },
    },
  ]),
);
