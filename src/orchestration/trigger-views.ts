import type { EventStatus, Trigger, TriggerEvent, VerificationType } from './trigger.entity';
import { targetView, type TargetView } from './target-view';

/** A trigger as answers show it: never its secret. */
export interface TriggerView {
  id: string;
  target: TargetView;
  /** The inbound URL's verification; null for an internal trigger. */
  verification: { type: VerificationType } | null;
  /** The service's own event an internal trigger starts on; null for an inbound one. */
  source: { event: string; tool_ids: string[] | null } | null;
  /** Path of the inbound URL (POST); null for an internal trigger. */
  url: string | null;
  filter: string | null;
  inputs: Record<string, string> | null;
  description: string | null;
  key_id: string;
  created_at: string;
  updated_at: string;
}

export interface EventView {
  id: string;
  at: string;
  status: EventStatus;
  /** Started (or starting): its target runs as `execution_id`. */
  accepted: boolean;
  reason: string | null;
  delivery_id: string | null;
  execution_id: string | null;
}

export function triggerView(row: Trigger): TriggerView {
  return {
    id: row.id,
    target: targetView(row.target_kind, row.target_id, row.target_inputs),
    verification: row.verification ? { type: row.verification } : null,
    source: row.source_event ? { event: row.source_event, tool_ids: row.source_tool_ids } : null,
    url: row.verification ? `/v1/triggers/${row.id}/events` : null,
    filter: row.filter,
    inputs: row.input_map,
    description: row.description,
    key_id: row.key_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function eventView(row: TriggerEvent): EventView {
  return {
    id: row.id,
    at: row.created_at.toISOString(),
    status: row.status,
    accepted: row.status === 'started' || row.status === 'pending',
    reason: row.reason,
    delivery_id: row.delivery_id,
    execution_id: row.execution_id,
  };
}
