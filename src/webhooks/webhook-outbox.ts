/**
 * The outbox rows of executions as they end: one per enabled subscription of the execution's
 * account that takes the event (and its tool). Run as a data-modifying CTE of the very statement
 * that ends the executions (src/executions/engine/executions.store.ts), so an execution never
 * ends without its deliveries, nor has deliveries without its end.
 */

/** The event of each status an execution can reach; other statuses (queued, running) send nothing. */
export const EXECUTION_EVENTS = {
  success: 'execution.completed',
  error: 'execution.failed',
  cancelled: 'execution.cancelled',
  input_required: 'execution.input_required',
} as const;

/** Events about the account's subscriptions themselves: `webhook.disabled` tells its other subscriptions that one was turned off, and why. */
export const SUBSCRIPTION_EVENTS = ['webhook.disabled'] as const;

export const WEBHOOK_EVENTS = [...Object.values(EXECUTION_EVENTS), ...SUBSCRIPTION_EVENTS];
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** A result larger than this, in bytes of JSON, is replaced by a link to the execution (docs/API.md#webhooks). */
export const MAX_INLINE_RESULT_BYTES = 64 * 1024;

const eventOf = `CASE e.status ${Object.entries(EXECUTION_EVENTS).map(([status, event]) => `WHEN '${status}' THEN '${event}'`).join(' ')} END`;

/** What `data.result` carries: the result on success, the error on failure, the questions when input is required. */
const resultOf = `CASE e.status WHEN 'success' THEN e.result WHEN 'error' THEN e.error WHEN 'input_required' THEN e.input_requests END`;

const boundedResult = `CASE WHEN octet_length((${resultOf})::text) > ${MAX_INLINE_RESULT_BYTES}
      THEN jsonb_build_object('truncated', true, 'size_bytes', octet_length((${resultOf})::text), 'url', '/v1/executions/' || e.id)
      ELSE ${resultOf} END`;

/** The columns every outbox row is written with, in the order the SELECTs below give them. */
export const DELIVERY_INSERT =
  'INSERT INTO webhook_deliveries (id, subscription_id, account_id, event, execution_id, data, event_at, status, attempt_count, next_attempt_at, attempts, created_at)';

/** A delivery's id (the `webhook-id`) made in SQL: `msg_` and 32 hex digits. */
export const newDeliveryId = "'msg_' || replace(gen_random_uuid()::text, '-', '')";

/**
 * `INSERT INTO webhook_deliveries …` for the rows of `ended` (a CTE or table holding execution
 * rows, read as `e`); `now` is the SQL expression of the event time.
 */
export function outboxInsert(ended: string, now = 'clock_timestamp()'): string {
  return `${DELIVERY_INSERT}
    SELECT ${newDeliveryId}, s.id, e.account_id, ${eventOf}, e.id,
           jsonb_build_object('execution_id', e.id, 'tool_id', e.tool_id, 'status', e.status, 'result', ${boundedResult}),
           ${now}, 'pending', 0, ${now}, '[]'::jsonb, ${now}
      FROM ${ended} e
      JOIN webhook_subscriptions s ON s.account_id = e.account_id AND s.enabled
       AND (${eventOf}) = ANY(s.events)
       AND (s.tool_ids IS NULL OR e.tool_id = ANY(s.tool_ids))`;
}

/** The events an internal trigger may start on (docs/orchestration.md#internal-triggers): an execution's end. */
export const TRIGGER_SOURCE_EVENTS = [EXECUTION_EVENTS.success, EXECUTION_EVENTS.error, EXECUTION_EVENTS.cancelled];

/**
 * `INSERT INTO trigger_events …`: one pending event for each internal trigger of the account of a
 * row of `ended` that takes its event (and tool), written in the same statement as the end, like
 * the webhook outbox; src/orchestration/trigger-launches.ts starts their targets. The execution's
 * id is the delivery id, so an end written twice starts nothing twice. An execution an internal
 * trigger started fires no internal trigger itself: a chain of them cannot loop.
 */
export function triggerEventsInsert(ended: string, now = 'clock_timestamp()'): string {
  return `INSERT INTO trigger_events (id, trigger_id, account_id, delivery_id, status, payload, created_at)
    SELECT 'tev_' || replace(gen_random_uuid()::text, '-', ''), t.id, e.account_id, e.id, 'pending',
           jsonb_build_object('event', t.source_event, 'execution_id', e.id, 'tool_id', e.tool_id, 'status', e.status, 'result', ${boundedResult}),
           ${now}
      FROM ${ended} e
      JOIN triggers t ON t.account_id = e.account_id AND t.source_event = (${eventOf})
       AND (t.source_tool_ids IS NULL OR e.tool_id = ANY(t.source_tool_ids))
     WHERE e.trigger_id IS NULL OR NOT EXISTS (SELECT 1 FROM triggers origin WHERE origin.id = e.trigger_id AND origin.source_event IS NOT NULL)
    ON CONFLICT DO NOTHING`;
}
