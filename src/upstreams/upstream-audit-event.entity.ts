import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** What the audit log records (docs/upstreams.md#audit-log). */
export const UPSTREAM_AUDIT_ACTIONS = [
  'upstream.created',
  'upstream.updated',
  'upstream.deleted',
  'upstream.enabled',
  'upstream.disabled',
  'upstream.tool_enabled',
  'upstream.tool_disabled',
  'upstream.called',
] as const;
export type UpstreamAuditAction = (typeof UPSTREAM_AUDIT_ACTIONS)[number];

/**
 * One event of the upstreams' audit log: who registered, changed or called which upstream. Kept
 * after the upstream is deleted (no foreign key to it), pruned past UPSTREAM_AUDIT_RETENTION_DAYS.
 * `details` holds names and settings, never a secret's value, a header's value or a call's input.
 */
@Entity('upstream_audit_events')
@Index('idx_upstream_audit_account_time', ['account_id', 'created_at'])
@Index('idx_upstream_audit_upstream_time', ['upstream_id', 'created_at'])
@Index('idx_upstream_audit_time', ['created_at'])
export class UpstreamAuditEvent {
  /** `uae_` + 24 base62, time-ordered. */
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_upstream_audit_events' })
  id: string;

  /** The account the event belongs to; null for a change to an operator-wide (shared) upstream. */
  @Column('text', { nullable: true })
  account_id: string | null;

  /** Who: an API key's id, a console session's id, `oauth:<client>:<account>`, or `operator`. */
  @Column('text')
  actor: string;

  @Column('text')
  action: UpstreamAuditAction;

  @Column('text')
  upstream_id: string;

  /** The upstream's name when the event happened (names are reused after a deletion). */
  @Column('text')
  upstream_name: string;

  @Column('jsonb')
  details: Record<string, unknown>;

  @Column('timestamptz')
  created_at: Date;
}
