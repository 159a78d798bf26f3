import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Account } from '../keys/account.entity';
import { Execution } from '../executions/engine/execution.entity';
import type { WorkflowDocument } from './workflow-document';
import type { RunState } from './run-plan';
import type { StoredPrincipal } from './run-principal';

/** A stored workflow at its latest version; every change is also kept in `workflow_versions`. */
@Entity('workflows')
@Index('idx_workflows_account_name', ['account_id', 'name'], { unique: true })
export class Workflow {
  /** `wf_` + 24 base62, time-ordered. */
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_workflows' })
  id: string;

  @Column('text')
  account_id: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_workflows_account' })
  account?: Account;

  @Column('text')
  name: string;

  @Column('integer')
  version: number;

  @Column('jsonb')
  document: WorkflowDocument;

  /** Listed in the account's catalogue as the tool `workflow.<name>`. */
  @Column('boolean', { default: false })
  publish: boolean;

  @Column('timestamptz')
  created_at: Date;

  @Column('timestamptz')
  updated_at: Date;
}

@Entity('workflow_versions')
export class WorkflowVersion {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_workflow_versions' })
  workflow_id: string;

  @PrimaryColumn('integer', { primaryKeyConstraintName: 'pk_workflow_versions' })
  version: number;

  @ManyToOne(() => Workflow, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workflow_id', foreignKeyConstraintName: 'fk_workflow_versions_workflow' })
  workflow?: Workflow;

  @Column('jsonb')
  document: WorkflowDocument;

  @Column('timestamptz')
  created_at: Date;
}

/**
 * A run's own state beside its execution row (kind `workflow`): the document it is pinned to, the
 * caller it runs as, its decisions (RunState), and the lease of the process advancing it.
 */
@Entity('workflow_runs')
export class WorkflowRun {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_workflow_runs' })
  execution_id: string;

  @ManyToOne(() => Execution, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'execution_id', foreignKeyConstraintName: 'fk_workflow_runs_execution' })
  execution?: Execution;

  @Column('text')
  account_id: string;

  @Column('text')
  workflow_id: string;

  @Column('integer')
  version: number;

  @Column('jsonb')
  document: WorkflowDocument;

  @Column('jsonb')
  principal: StoredPrincipal;

  @Column('jsonb')
  state: RunState;

  /** Raised by a process that found the run leased: the holder looks again before letting go. */
  @Column('integer', { default: 0 })
  wake: number;

  @Column('timestamptz', { nullable: true })
  lease_until: Date | null;

  @Column('text', { nullable: true })
  leased_by: string | null;

  @Column('text', { nullable: true })
  schedule_id: string | null;

  @Column('text', { nullable: true })
  trigger_id: string | null;
}
