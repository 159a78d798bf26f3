import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { Account } from '../keys/account.entity';
import type { TargetKind } from './target-launcher';

export const VERIFICATION_TYPES = ['github', 'gitlab', 'standard_webhooks', 'bearer'] as const;
export type VerificationType = (typeof VERIFICATION_TYPES)[number];

/**
 * A trigger (docs/orchestration.md#triggers): an inbound URL whose verified events start its
 * target (`verification` set), or an internal one on this service's own execution events
 * (`source_event` set).
 */
@Entity('triggers')
@Index('idx_triggers_account', ['account_id', 'id'])
@Index('idx_triggers_source', ['account_id', 'source_event'], { where: '"source_event" IS NOT NULL' })
export class Trigger {
  /** `trg_` + 20 base62. */
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_triggers' })
  id: string;

  @Column('text')
  account_id: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_triggers_account' })
  account?: Account;

  @Column('text')
  key_id: string;

  @Column('text')
  target_kind: TargetKind;

  @Column('text')
  target_id: string;

  /** Literal inputs; the mapping's values override them. */
  @Column('jsonb')
  target_inputs: Record<string, unknown>;

  /** Target input name → JSONata expression over `{ payload, headers }`. */
  @Column('jsonb', { nullable: true })
  input_map: Record<string, string> | null;

  /** JSONata over `{ payload, headers }`: a falsy value refuses the event. */
  @Column('text', { nullable: true })
  filter: string | null;

  @Column('text', { nullable: true })
  verification: VerificationType | null;

  @Column('text', { nullable: true })
  secret_key_id: string | null;

  @Column('text', { nullable: true })
  secret_sealed: string | null;

  @Column('text', { nullable: true })
  source_event: string | null;

  @Column('text', { array: true, nullable: true })
  source_tool_ids: string[] | null;

  @Column('text', { nullable: true })
  description: string | null;

  @Column('timestamptz')
  created_at: Date;

  @Column('timestamptz')
  updated_at: Date;
}

export const EVENT_STATUSES = ['pending', 'started', 'filtered', 'refused', 'failed'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/**
 * One event a trigger received, accepted or not: the recent-events log. A verified event's
 * delivery id is unique per trigger, so a sender's retry starts nothing twice.
 */
@Entity('trigger_events')
@Unique('uq_trigger_events_delivery', ['trigger_id', 'delivery_id'])
@Index('idx_trigger_events_trigger', ['trigger_id', 'id'])
@Index('idx_trigger_events_pending', ['created_at'], { where: `"status" = 'pending'` })
export class TriggerEvent {
  /** `tev_` + base62 (or a uuid's hex for internal events). */
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_trigger_events' })
  id: string;

  @Column('text')
  trigger_id: string;

  @ManyToOne(() => Trigger, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'trigger_id', foreignKeyConstraintName: 'fk_trigger_events_trigger' })
  trigger?: Trigger;

  @Column('text')
  account_id: string;

  @Column('text', { nullable: true })
  delivery_id: string | null;

  @Column('text')
  status: EventStatus;

  @Column('text', { nullable: true })
  reason: string | null;

  /** An internal event's data until its target starts (the filter and mapping read it then). */
  @Column('jsonb', { nullable: true })
  payload: Record<string, unknown> | null;

  /** An inbound event's target inputs until its target starts (a run taken over after a crash needs them). */
  @Column('jsonb', { nullable: true })
  inputs: Record<string, unknown> | null;

  @Column('text', { nullable: true })
  execution_id: string | null;

  @Column('timestamptz', { nullable: true })
  locked_until: Date | null;

  @Column('timestamptz')
  created_at: Date;
}
