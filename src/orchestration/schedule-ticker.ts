import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppException } from '../common/errors';
import { scheduleRuns, scheduleTicks } from '../common/probes';
import { newExecutionId, randomBase62 } from '../common/ids';
import { CronSchedule } from './cron';
import { KeyPrincipals } from './key-principals';
import { MAX_COUNTED_TICKS, planTick } from './schedule-plan';
import { Schedule, ScheduleRun, type RunStatus } from './schedule.entity';
import { TargetLauncher } from './target-launcher';

/** Schedules claimed, and runs started, per pass at most. */
const BATCH = 100;
/** How long a claimed run stays this process's: past it (the process died) another takes it over. */
export const RUN_LEASE_MS = 5 * 60_000;
const ACTIVE_STATUSES = `('queued', 'running', 'input_required')`;

/**
 * Runs schedules (docs/orchestration.md#exactly-once-ticks), driven by the OrchestrationLoop in
 * any number of processes at once:
 *
 * 1. Claim: for each due schedule, one transaction moves `next_run_at` past the tick with a
 *    compare-and-set on its old value and inserts the tick's run (unique per schedule and tick).
 *    Of two processes only one moves it; the other's UPDATE matches nothing. A crash before the
 *    commit leaves the tick due; after it, the run is in the table.
 * 2. Start: the oldest pending run of each schedule is leased with a conditional UPDATE, then its
 *    target started with the execution id chosen at the claim. A run whose process died is taken
 *    again when its lease lapses; its execution, if it was started, is found by that id, so the
 *    target is not started twice.
 */
@Injectable()
export class ScheduleTicker {
  private readonly logger = new Logger(ScheduleTicker.name);

  constructor(
    @InjectRepository(Schedule) private readonly schedules: Repository<Schedule>,
    @InjectRepository(ScheduleRun) private readonly runs: Repository<ScheduleRun>,
    private readonly keys: KeyPrincipals,
    private readonly launcher: TargetLauncher,
  ) {}

  /** Claims every due tick (each schedule in its own transaction); answers how many it claimed. */
  async claimDue(now: Date): Promise<number> {
    const due = await this.schedules
      .createQueryBuilder('s')
      .where('NOT s.paused AND s.next_run_at <= :now', { now })
      .orderBy('s.next_run_at')
      .limit(BATCH)
      .getMany();
    let claimed = 0;
    for (const schedule of due) {
      try {
        if (await this.claim(schedule, now)) claimed++;
      } catch (err) {
        this.logger.error(`Schedule ${schedule.id}: its tick could not be claimed: ${(err as Error).message}`);
      }
    }
    return claimed;
  }

  private async claim(schedule: Schedule, now: Date): Promise<boolean> {
    const due = schedule.next_run_at!;
    let plan;
    try {
      plan = planTick(new CronSchedule(schedule.cron, schedule.timezone), due, schedule.catch_up, now);
    } catch (err) {
      // Only a time zone the runtime no longer knows gets here: pause rather than retry every pass.
      await this.pause(schedule.id, `Its schedule can no longer be computed: ${(err as Error).message}`);
      return false;
    }
    const missed = plan.covered > 1 ? `${plan.covered > MAX_COUNTED_TICKS ? `Over ${MAX_COUNTED_TICKS}` : plan.covered} ticks from ${due.toISOString()} passed while no process ran` : `The tick was ${Math.round((now.getTime() - due.getTime()) / 1000)} s late`;
    const run = this.runs.create({
      id: `srn_${randomBase62(20)}`,
      schedule_id: schedule.id,
      account_id: schedule.account_id,
      tick_at: plan.tick,
      status: plan.outcome === 'run' ? 'pending' : 'missed',
      reason: plan.outcome === 'missed' ? `Not run (catch_up: none): ${missed}` : plan.late ? `Caught up (catch_up: last): ${missed}` : null,
      execution_id: plan.outcome === 'run' ? newExecutionId(now.getTime()) : null,
      locked_until: null,
      created_at: now,
      ended_at: plan.outcome === 'run' ? null : now,
    });
    const moved = await this.schedules.manager.transaction(async (tx) => {
      const [rows] = (await tx.query(
        `UPDATE schedules SET next_run_at = $3 WHERE id = $1 AND next_run_at = $2 AND NOT paused RETURNING id`,
        [schedule.id, due.toISOString(), plan.next?.toISOString() ?? null],
      )) as [unknown[], number];
      if (rows.length !== 1) return false;
      // A tick that already has its run (a schedule retimed onto a tick a process with a clock
      // ahead had claimed) is passed over, not claimed twice; the schedule still moves on.
      const inserted = (await tx.query(
        `INSERT INTO schedule_runs SELECT * FROM jsonb_populate_record(NULL::schedule_runs, $1::jsonb) ON CONFLICT (schedule_id, tick_at) DO NOTHING RETURNING id`,
        [JSON.stringify(run)],
      )) as unknown[];
      return inserted.length === 1;
    });
    if (moved && scheduleTicks.hasSubscribers) scheduleTicks.publish({ lagSeconds: (now.getTime() - plan.tick.getTime()) / 1000, outcome: plan.outcome });
    return moved;
  }

  /** Leases the oldest pending run of each schedule (none of a schedule whose oldest another process holds) and starts them. */
  async startPending(now: Date): Promise<void> {
    const [leased] = (await this.runs.query(
      `UPDATE schedule_runs r SET locked_until = $2
         FROM (SELECT id FROM (SELECT DISTINCT ON (schedule_id) id, tick_at, locked_until FROM schedule_runs
                                WHERE status = 'pending' ORDER BY schedule_id, tick_at) oldest
                WHERE oldest.locked_until IS NULL OR oldest.locked_until < $1
                ORDER BY tick_at LIMIT $3) picked
        WHERE r.id = picked.id AND r.status = 'pending' AND (r.locked_until IS NULL OR r.locked_until < $1)
        RETURNING r.*`,
      [now.toISOString(), new Date(now.getTime() + RUN_LEASE_MS).toISOString(), BATCH],
    )) as [ScheduleRun[], number];
    for (const run of leased) {
      try {
        await this.start(this.runs.create(run), now);
      } catch (err) {
        // The database went away mid-start: the lease lapses and the run is taken again.
        this.logger.error(`Schedule run ${run.id} could not be started: ${(err as Error).message}`);
      }
    }
  }

  private async start(run: ScheduleRun, now: Date): Promise<void> {
    const schedule = await this.schedules.findOneBy({ id: run.schedule_id });
    if (!schedule) return;
    if (await this.executionExists(run.execution_id!)) return this.end(run, 'started', null);
    if (schedule.paused) return this.end(run, 'skipped', 'The schedule was paused before its run started');
    if (schedule.overlap !== 'allow') {
      const active = await this.activeExecution(schedule.id);
      if (active && schedule.overlap === 'skip') return this.end(run, 'skipped', `Skipped (overlap: skip): the previous run's execution ${active} was still active`);
      if (active) {
        // overlap: queue. Waits, leased by no one, for the next pass after the active one ends.
        await this.runs.update({ id: run.id, status: 'pending' }, { locked_until: null });
        return;
      }
    }
    const standing = await this.keys.standing(schedule.key_id, now);
    if ('refused' in standing) {
      await this.end(run, 'refused', standing.refused);
      await this.pause(schedule.id, `${standing.refused}: resume it with another key`);
      return;
    }
    try {
      await this.launcher.launch({
        principal: standing.principal,
        target: { kind: schedule.target_kind, id: schedule.target_id },
        inputs: schedule.inputs,
        origin: { executionId: run.execution_id!, scheduleId: schedule.id },
      });
    } catch (err) {
      if (!(err instanceof AppException)) throw err;
      return this.end(run, 'failed', `${err.code}: ${err.message}`);
    }
    await this.end(run, 'started', null);
  }

  private async executionExists(id: string): Promise<boolean> {
    const rows = (await this.runs.query(`SELECT 1 FROM executions WHERE id = $1`, [id])) as unknown[];
    return rows.length > 0;
  }

  private async activeExecution(scheduleId: string): Promise<string | null> {
    const rows = (await this.runs.query(
      `SELECT e.id FROM schedule_runs r JOIN executions e ON e.id = r.execution_id
        WHERE r.schedule_id = $1 AND r.status = 'started' AND e.status IN ${ACTIVE_STATUSES} LIMIT 1`,
      [scheduleId],
    )) as Array<{ id: string }>;
    return rows[0]?.id ?? null;
  }

  /** Ends a pending run; a start keeps the reason its claim gave (a catch-up). */
  private async end(run: ScheduleRun, status: RunStatus, reason: string | null): Promise<void> {
    await this.runs.update({ id: run.id, status: 'pending' }, { status, ...(reason !== null && { reason }), locked_until: null, ended_at: new Date() });
    if (scheduleRuns.hasSubscribers) scheduleRuns.publish({ status });
  }

  private async pause(scheduleId: string, reason: string): Promise<void> {
    await this.schedules.update({ id: scheduleId }, { paused: true, paused_reason: reason, next_run_at: null, updated_at: new Date() });
    this.logger.warn(`Schedule ${scheduleId} paused: ${reason}`);
  }
}
