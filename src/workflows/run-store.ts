import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { Execution } from '../executions/engine/execution.entity';
import { WorkflowRun } from './workflow.entity';
import type { RunState } from './run-plan';

/** How long a process may hold a run while it advances it; a holder that died is replaced after this. */
export const LEASE_SECONDS = 30;

/**
 * Workflow run rows: the lease that lets one process at a time advance a run (any process, in any
 * role, may try; the others raise `wake` so the holder looks again), and the run's decisions.
 */
@Injectable()
export class RunStore {
  constructor(@InjectRepository(WorkflowRun) private readonly runs: Repository<WorkflowRun>) {}

  /**
   * The run and its execution, in one transaction: a process that dies in between leaves neither,
   * so a schedule's tick or a trigger's event that takes the start over finds nothing half made.
   */
  async insert(run: WorkflowRun, execution: Execution): Promise<void> {
    await this.runs.manager.transaction(async (manager) => {
      // Inserts, never saves: a second start of the same id fails instead of overwriting the first.
      // (TypeORM's insert types do not take jsonb members typed as records: the casts.)
      await manager.insert(Execution, execution as QueryDeepPartialEntity<Execution>);
      await manager.insert(WorkflowRun, run as QueryDeepPartialEntity<WorkflowRun>);
    });
  }

  find(executionId: string): Promise<WorkflowRun | null> {
    return this.runs.findOneBy({ execution_id: executionId });
  }

  /** Takes the run for `holder`, or raises its `wake` and answers null when another process holds it. */
  async lease(executionId: string, holder: string, now: Date): Promise<WorkflowRun | null> {
    const [rows] = (await this.runs.query(
      `UPDATE workflow_runs SET leased_by = $2, lease_until = $3::timestamptz + make_interval(secs => ${LEASE_SECONDS})
        WHERE execution_id = $1 AND (lease_until IS NULL OR lease_until < $3::timestamptz OR leased_by = $2) RETURNING *`,
      [executionId, holder, now.toISOString()],
    )) as [WorkflowRun[], number];
    if (rows[0]) return this.runs.create(rows[0]);
    await this.runs.query(`UPDATE workflow_runs SET wake = wake + 1 WHERE execution_id = $1`, [executionId]);
    return null;
  }

  /** Lets the run go unless someone raised `wake` since `wake` was read: false tells the holder to look again. */
  async release(executionId: string, holder: string, wake: number): Promise<boolean> {
    const [, count] = (await this.runs.query(`UPDATE workflow_runs SET leased_by = NULL, lease_until = NULL WHERE execution_id = $1 AND leased_by = $2 AND wake = $3`, [
      executionId,
      holder,
      wake,
    ])) as [unknown, number];
    return count > 0;
  }

  async saveState(executionId: string, state: RunState): Promise<void> {
    await this.runs.query(`UPDATE workflow_runs SET state = $2::jsonb WHERE execution_id = $1`, [executionId, JSON.stringify(state)]);
  }

  /** Whether an API key can still call now: it exists, and is neither revoked nor expired. */
  async keyValid(keyId: string, now: Date): Promise<boolean> {
    const [row] = (await this.runs.query(`SELECT revoked_at, expires_at FROM api_keys WHERE id = $1`, [keyId])) as Array<{ revoked_at: Date | null; expires_at: Date | null }>;
    const ended = (at: Date | null) => at !== null && new Date(at).getTime() <= now.getTime();
    return row !== undefined && !ended(row.revoked_at) && !ended(row.expires_at);
  }

  /** Runs still active whose lease is free (nobody advances them now), oldest first: the sweep's work. */
  async unattended(now: Date, limit: number): Promise<string[]> {
    const rows = (await this.runs.query(
      `SELECT r.execution_id FROM workflow_runs r JOIN executions e ON e.id = r.execution_id
        WHERE e.status IN ('running', 'input_required') AND (r.lease_until IS NULL OR r.lease_until < $1::timestamptz)
        ORDER BY r.execution_id LIMIT $2`,
      [now.toISOString(), limit],
    )) as Array<{ execution_id: string }>;
    return rows.map((row) => row.execution_id);
  }

  /** Ended runs that still have active steps (a cancel or deadline whose process died before cancelling them). */
  async endedWithActiveSteps(limit: number): Promise<string[]> {
    const rows = (await this.runs.query(
      `SELECT DISTINCT e.id FROM executions e JOIN executions c ON c.parent_execution_id = e.id
        WHERE e.kind = 'workflow' AND e.status IN ('success', 'error', 'cancelled') AND c.status IN ('queued', 'running', 'input_required')
        LIMIT $1`,
      [limit],
    )) as Array<{ id: string }>;
    return rows.map((row) => row.id);
  }
}
