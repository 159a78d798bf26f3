import type { DeliveryAttempt, DeliveryStatus, WebhookDelivery } from './webhook-delivery.entity';
import type { WebhookSubscription } from './webhook-subscription.entity';

/** A subscription as answers show it: never its secrets. */
export interface SubscriptionView {
  id: string;
  url: string;
  events: string[];
  tool_ids: string[] | null;
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  /** Until when the secret before the last rotation still signs beside the current one; null when none does. */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface DeliveryView {
  id: string;
  event: string;
  execution_id: string | null;
  status: DeliveryStatus;
  created_at: string;
  next_attempt_at: string | null;
  delivered_at: string | null;
  last_error: string | null;
  attempts: DeliveryAttempt[];
}

export function subscriptionView(row: WebhookSubscription): SubscriptionView {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    tool_ids: row.tool_ids,
    description: row.description,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    previous_secret_expires_at: row.previous_secret_expires_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function deliveryView(row: WebhookDelivery): DeliveryView {
  return {
    id: row.id,
    event: row.event,
    execution_id: row.execution_id,
    status: row.status,
    created_at: new Date(row.created_at).toISOString(),
    next_attempt_at: row.status === 'pending' ? new Date(row.next_attempt_at).toISOString() : null,
    delivered_at: row.delivered_at ? new Date(row.delivered_at).toISOString() : null,
    last_error: row.last_error,
    attempts: row.attempts,
  };
}
