import { CronSchedule, SHOWN_NEXT_RUNS } from './cron';
import type { RunStatus, Schedule, ScheduleRun } from './schedule.entity';
import { targetView, type TargetView } from './target-view';

export interface ScheduleView {
  id: string;
  target: TargetView;
  cron: string;
  timezone: string;
  overlap: Schedule['overlap'];
  catch_up: Schedule['catch_up'];
  paused: boolean;
  paused_reason: string | null;
  next_run_at: string | null;
  /** The next few ticks from `next_run_at` (none while paused). */
  next_runs: string[];
  key_id: string;
  created_at: string;
  updated_at: string;
}

export interface RunView {
  id: string;
  tick_at: string;
  status: RunStatus;
  reason: string | null;
  execution_id: string | null;
  /** The execution's own status, once it exists. */
  execution_status: string | null;
  created_at: string;
  ended_at: string | null;
}

export function scheduleView(row: Schedule): ScheduleView {
  const upcoming = row.paused || !row.next_run_at ? [] : [row.next_run_at, ...new CronSchedule(row.cron, row.timezone).nextRuns(SHOWN_NEXT_RUNS - 1, row.next_run_at)];
  return {
    id: row.id,
    target: targetView(row.target_kind, row.target_id, row.inputs),
    cron: row.cron,
    timezone: row.timezone,
    overlap: row.overlap,
    catch_up: row.catch_up,
    paused: row.paused,
    paused_reason: row.paused_reason,
    next_run_at: row.paused ? null : (row.next_run_at?.toISOString() ?? null),
    next_runs: upcoming.map((at) => at.toISOString()),
    key_id: row.key_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function runView(row: ScheduleRun & { execution_status?: string | null }): RunView {
  return {
    id: row.id,
    tick_at: new Date(row.tick_at).toISOString(),
    status: row.status,
    reason: row.reason,
    execution_id: row.status === 'started' ? row.execution_id : null,
    execution_status: row.execution_status ?? null,
    created_at: new Date(row.created_at).toISOString(),
    ended_at: row.ended_at ? new Date(row.ended_at).toISOString() : null,
  };
}
