import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { WebhookSubscription } from './webhook-subscription.entity';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One attempt of a delivery, as the log shows it. */
export interface DeliveryAttempt {
  at: string;
  status_code: number | null;
  latency_ms: number;
  /** Why no answer counted (timeout, connection refused, egress refused); null when the endpoint answered. */
  error: string | null;
  /** The first bytes of the answer's body (docs/API.md#webhooks). */
  response_excerpt: string | null;
}

/**
 * The outbox: one event for one subscription, written in the statement that ends the execution
 * (src/webhooks/webhook-outbox.ts), sent and retried by the WebhookDispatcher until delivered or failed.
 * Its id is the Standard Webhooks `webhook-id`: the same on every attempt.
 */
@Entity('webhook_deliveries')
@Index('idx_webhook_deliveries_due', ['status', 'next_attempt_at'])
@Index('idx_webhook_deliveries_subscription', ['subscription_id', 'id'])
@Index('idx_webhook_deliveries_pending_subscription', ['status', 'subscription_id', 'next_attempt_at'])
export class WebhookDelivery {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_webhook_deliveries' })
  id: string;

  @Column('text')
  subscription_id: string;

  @ManyToOne(() => WebhookSubscription, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'subscription_id', foreignKeyConstraintName: 'fk_webhook_deliveries_subscription' })
  subscription?: WebhookSubscription;

  @Column('text')
  account_id: string;

  @Column('text')
  event: string;

  @Column('text', { nullable: true })
  execution_id: string | null;

  /** The payload's `data` member. */
  @Column('jsonb')
  data: Record<string, unknown>;

  /** When the event happened: the payload's `timestamp`. */
  @Column('timestamptz')
  event_at: Date;

  @Column('text')
  status: DeliveryStatus;

  /** Attempts since it was last (re)queued: where it is in the retry schedule. */
  @Column('integer', { default: 0 })
  attempt_count: number;

  @Column('timestamptz')
  next_attempt_at: Date;

  /** A dispatcher holds it until then; a process that died holding it lets it go at this time. */
  @Column('timestamptz', { nullable: true })
  locked_until: Date | null;

  @Column('jsonb')
  attempts: DeliveryAttempt[];

  @Column('text', { nullable: true })
  last_error: string | null;

  @Column('timestamptz')
  created_at: Date;

  @Column('timestamptz', { nullable: true })
  delivered_at: Date | null;
}
