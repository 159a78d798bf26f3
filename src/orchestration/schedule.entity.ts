import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { Account } from '../keys/account.entity';
import type { TargetKind } from './target-launcher';

export const OVERLAP_POLICIES = ['skip', 'queue', 'allow'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];
export const CATCH_UP_POLICIES = ['none', 'last'] as const;
export type CatchUpPolicy = (typeof CATCH_UP_POLICIES)[number];

/** A cron schedule that starts its target as the key that created it (docs/orchestration.md#schedules). */
@Entity('schedules')
@Index('idx_schedules_account', ['account_id', 'id'])
export class Schedule {
  /** `sch_` + 20 base62. */
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_schedules' })
  id: string;

  @Column('text')
  account_id: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_schedules_account' })
  account?: Account;

  /** The key it runs as, reloaded at every run. */
  @Column('text')
  key_id: string;

  @Column('text')
  target_kind: TargetKind;

  @Column('text')
  target_id: string;

  @Column('jsonb')
  inputs: Record<string, unknown>;

  @Column('text')
  cron: string;

  @Column('text')
  timezone: string;

  @Column('text')
  overlap: OverlapPolicy;

  @Column('text')
  catch_up: CatchUpPolicy;

  @Column('boolean')
  paused: boolean;

  /** Why the service paused it (its key revoked or expired); null when its owner did. */
  @Column('text', { nullable: true })
  paused_reason: string | null;

  /** The next tick not yet claimed; a process claims it by moving it on (a compare-and-set). */
  @Index('idx_schedules_due', { where: 'NOT "paused"' })
  @Column('timestamptz', { nullable: true })
  next_run_at: Date | null;

  @Column('timestamptz')
  created_at: Date;

  @Column('timestamptz')
  updated_at: Date;
}

export const RUN_STATUSES = ['pending', 'started', 'skipped', 'missed', 'refused', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/**
 * One claimed tick of a schedule: written in the transaction that moves the schedule's
 * `next_run_at` past it, unique per (schedule, tick), and `pending` until its target is started
 * (or the tick is skipped or refused). Its execution id is chosen when it is claimed.
 */
@Entity('schedule_runs')
@Unique('uq_schedule_runs_tick', ['schedule_id', 'tick_at'])
@Index('idx_schedule_runs_pending', ['schedule_id', 'tick_at'], { where: `"status" = 'pending'` })
export class ScheduleRun {
  /** `srn_` + 20 base62. */
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_schedule_runs' })
  id: string;

  @Column('text')
  schedule_id: string;

  @ManyToOne(() => Schedule, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'schedule_id', foreignKeyConstraintName: 'fk_schedule_runs_schedule' })
  schedule?: Schedule;

  @Column('text')
  account_id: string;

  @Column('timestamptz')
  tick_at: Date;

  @Column('text')
  status: RunStatus;

  @Column('text', { nullable: true })
  reason: string | null;

  @Column('text', { nullable: true })
  execution_id: string | null;

  /** While a process starts it; a run whose process died is taken again once this has passed. */
  @Column('timestamptz', { nullable: true })
  locked_until: Date | null;

  @Column('timestamptz')
  created_at: Date;

  @Column('timestamptz', { nullable: true })
  ended_at: Date | null;
}
