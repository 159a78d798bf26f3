import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Account } from '../../keys/account.entity';
import type { ErrorBody } from '../../common/errors';
import type { InputRequest } from '../../tools/sdk';
import type { Sealed } from '../../secrets/secret-cipher';

/** `input_required`: the tool stopped to ask its caller (an async call); an answer queues it again. */
export const EXECUTION_STATUSES = ['queued', 'running', 'input_required', 'success', 'error', 'cancelled'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];
export type ExecutionKind = 'tool' | 'workflow';
export type TerminalStatus = 'success' | 'error' | 'cancelled';
export const TERMINAL_STATUSES: ReadonlySet<ExecutionStatus> = new Set<TerminalStatus>(['success', 'error', 'cancelled']);

@Entity('executions')
@Index('idx_executions_account_id', ['account_id', 'id'])
@Index('idx_executions_account_status', ['account_id', 'status', 'id'])
@Index('idx_executions_account_tool', ['account_id', 'tool_id', 'id'])
// The sweeper looks for the few active rows among many finished ones.
@Index('idx_executions_status', ['status'])
@Index('idx_executions_created_at', ['created_at'])
@Index('idx_executions_parent_step', ['parent_execution_id', 'step_key'], { unique: true })
export class Execution {
  /** `exec_` + 24 base62, time-ordered: listing newest first is ordering by id. */
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_executions' })
  id: string;

  @Column('text')
  account_id: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_executions_account' })
  account?: Account;

  @Column('text')
  key_id: string;

  @Column('text')
  tool_id: string;

  @Column('text')
  tool_version: string;

  @Column('text')
  status: ExecutionStatus;

  @Column('text')
  mode: 'sync' | 'async';

  @Column('smallint', { default: 0 })
  progress: number;

  @Column('text', { nullable: true })
  progress_message: string | null;

  /** Validated input with `secret` members redacted. */
  @Column('jsonb')
  input: Record<string, unknown>;

  @Column('jsonb', { nullable: true })
  result: Record<string, unknown> | null;

  @Column('jsonb', { nullable: true })
  error: ErrorBody | null;

  @Column('text', { nullable: true })
  request_id: string | null;

  @Column('timestamptz')
  created_at: Date;

  @Column('timestamptz', { nullable: true })
  started_at: Date | null;

  @Column('timestamptz', { nullable: true })
  completed_at: Date | null;

  @Column('integer', { nullable: true })
  duration_ms: number | null;

  /** The timeout the call ran (or will run) with: its deadline, for the sweeper and a re-queue. */
  @Column('integer', { nullable: true })
  timeout_seconds: number | null;

  /** While `input_required`: the questions not yet answered, by key (ctx.requestInput). */
  @Column('jsonb', { nullable: true })
  input_requests: Record<string, InputRequest> | null;

  /** The caller's answers so far, by question key: a run asked again starts with them. */
  @Column('jsonb', { nullable: true })
  input_responses: Record<string, unknown> | null;

  /** Since when an async execution waits for a worker or for its caller's answer (else `created_at`): the sweeper's clock. */
  @Column('timestamptz', { nullable: true })
  waiting_since: Date | null;

  /**
   * While active: the call's credential inputs sealed with SECRETS_KEY (as its job carries them),
   * so it can be queued again from this row when its job is lost; cleared when it ends.
   */
  @Column('jsonb', { nullable: true })
  sealed_inputs: Sealed | null;

  /** True for an async call whose caller cannot be asked (an MCP 2025-11-25 task): a re-queue from this row keeps it so. */
  @Column('boolean', { nullable: true })
  unaskable: boolean | null;

  /**
   * The upstream MCP task this execution runs as (docs/upstreams.md#upstream-tasks), once created
   * (a run after its caller's answers starts, and names, a new one).
   */
  @Column('jsonb', { nullable: true })
  upstream_task: { upstream_id: string; task_id: string } | null;

  /** The job that moved it to `running` (its id in the queue): only that job's next try may take the row again. */
  @Column('varchar', { nullable: true })
  claimed_by: string | null;

  /** The schedule whose tick started it (docs/orchestration.md). */
  @Column('text', { nullable: true })
  schedule_id: string | null;

  /** The trigger whose event started it (docs/orchestration.md). */
  @Column('text', { nullable: true })
  trigger_id: string | null;

  /** `tool`: one tool call; `workflow`: a run of a workflow, whose steps are its child executions (docs/workflows.md). */
  @Column('text', { default: 'tool' })
  kind: ExecutionKind;

  /** A workflow step: the run it belongs to. */
  @Column('text', { nullable: true })
  parent_execution_id: string | null;

  /** A workflow step: its step id (`scan`, or `scan[2]` for a for_each item); unique within its run, so a step is started once. */
  @Column('text', { nullable: true })
  step_key: string | null;
}
