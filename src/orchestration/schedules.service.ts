import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppException } from '../common/errors';
import { underAccountCap } from '../database/account-cap';
import { randomBase62 } from '../common/ids';
import type { Principal } from '../identity/principal';
import { ORCHESTRATION_LIMITS } from '../identity/tiers';
import { CronSchedule } from './cron';
import { RunningKeys, type RunningKey } from './key-principals';
import { ownedBy, visibleTo } from './ownership';
import { Schedule, ScheduleRun, type CatchUpPolicy, type OverlapPolicy } from './schedule.entity';
import { runView, scheduleView, type RunView, type ScheduleView } from './schedule-views';
import { TargetLauncher } from './target-launcher';
import { parseTarget } from './target-view';

export interface ScheduleFields {
  target: Record<string, unknown>;
  cron: string;
  timezone?: string;
  overlap?: OverlapPolicy;
  catch_up?: CatchUpPolicy;
  paused?: boolean;
  /** The key it runs as, when not the caller's own (docs/orchestration.md#the-key-it-runs-as). */
  key_id?: string;
}

export type ScheduleChanges = Partial<Omit<ScheduleFields, 'target'>>;

/** Schedules of an account and their runs (docs/orchestration.md#schedules); the ScheduleTicker runs them. */
@Injectable()
export class SchedulesService {
  constructor(
    @InjectRepository(Schedule) private readonly schedules: Repository<Schedule>,
    @InjectRepository(ScheduleRun) private readonly runs: Repository<ScheduleRun>,
    private readonly launcher: TargetLauncher,
    private readonly runningKeys: RunningKeys,
  ) {}

  async create(principal: Principal, fields: ScheduleFields, now = new Date()): Promise<ScheduleView> {
    const { target: named, inputs } = parseTarget(fields.target);
    const timezone = fields.timezone ?? 'UTC';
    const cron = this.checkedCron(principal, fields.cron, timezone, now);
    const id = `sch_${randomBase62(20)}`;
    const { principal: runAs, ...runningKey } = await this.runningKeys.for(principal, fields.key_id, `schedule ${id}`, now);
    const target = await this.runningKeys.orRelease(principal.accountId, runningKey, () => this.launcher.check(runAs, named, inputs, 'target'));
    const paused = fields.paused ?? false;
    const row = this.schedules.create({
      id,
      account_id: principal.accountId,
      ...runningKey,
      target_kind: target.kind,
      target_id: target.id,
      inputs,
      cron: fields.cron,
      timezone,
      overlap: fields.overlap ?? 'skip',
      catch_up: fields.catch_up ?? 'none',
      paused,
      paused_reason: null,
      next_run_at: paused ? null : cron.nextAfter(now),
      created_at: now,
      updated_at: now,
    });
    const limit = ORCHESTRATION_LIMITS[principal.tier].schedules;
    await this.runningKeys.orRelease(principal.accountId, runningKey, () => underAccountCap(this.schedules.manager, principal.accountId, Schedule, limit, 'schedules', (manager) => manager.save(Schedule, row)));
    return scheduleView(row);
  }

  async list(principal: Principal, limit: number, offset: number): Promise<{ schedules: ScheduleView[]; total: number }> {
    const [rows, total] = await this.schedules.findAndCount({ where: visibleTo(principal), order: { id: 'ASC' }, take: limit, skip: offset });
    return { schedules: rows.map(scheduleView), total };
  }

  async get(principal: Principal, id: string): Promise<ScheduleView> {
    return scheduleView(await this.find(principal, id));
  }

  /**
   * Pause (`paused: true`), resume (`false`: from the next tick after now; ticks while paused are
   * not caught up), or change when and how it runs. A resume makes the caller's key, or the one
   * named in `key_id`, the one it runs as (how a schedule paused for a revoked key resumes).
   */
  async update(principal: Principal, id: string, changes: ScheduleChanges, now = new Date()): Promise<ScheduleView> {
    const row = await this.find(principal, id);
    const timezone = changes.timezone ?? row.timezone;
    const expression = changes.cron ?? row.cron;
    const cron = this.checkedCron(principal, expression, timezone, now);
    const paused = changes.paused ?? row.paused;
    const resumed = row.paused && !paused;
    const retimed = changes.cron !== undefined || changes.timezone !== undefined;
    let replaced: RunningKey | null = null;
    if (resumed || changes.key_id !== undefined) {
      const { principal: runAs, ...runningKey } = await this.runningKeys.for(principal, changes.key_id, `schedule ${row.id}`, now);
      await this.runningKeys.orRelease(principal.accountId, runningKey, () => this.launcher.check(runAs, { kind: row.target_kind, id: row.target_id }, row.inputs, 'target'));
      replaced = { key_id: row.key_id, key_minted: row.key_minted };
      Object.assign(row, runningKey);
    }
    Object.assign(row, {
      cron: expression,
      timezone,
      overlap: changes.overlap ?? row.overlap,
      catch_up: changes.catch_up ?? row.catch_up,
      paused,
      paused_reason: paused ? row.paused_reason : null,
      next_run_at: paused ? null : resumed || retimed ? cron.nextAfter(now) : row.next_run_at,
      updated_at: now,
    });
    await this.schedules.save(row);
    if (replaced && replaced.key_id !== row.key_id) await this.runningKeys.release(row.account_id, replaced);
    return scheduleView(row);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const row = await this.find(principal, id);
    await this.schedules.delete({ id: row.id });
    await this.runningKeys.release(row.account_id, row);
  }

  /** Its runs, newest tick first, each with its execution's status once it has one. */
  async runsOf(principal: Principal, id: string, limit: number, offset: number): Promise<{ runs: RunView[]; total: number }> {
    const row = await this.find(principal, id);
    const [rows, [{ total }]] = await Promise.all([
      this.runs.query(
        `SELECT r.*, e.status AS execution_status FROM schedule_runs r LEFT JOIN executions e ON e.id = r.execution_id AND r.status = 'started'
          WHERE r.schedule_id = $1 ORDER BY r.tick_at DESC LIMIT $2 OFFSET $3`,
        [row.id, limit, offset],
      ) as Promise<Array<ScheduleRun & { execution_status: string | null }>>,
      this.runs.query(`SELECT count(*)::int AS total FROM schedule_runs WHERE schedule_id = $1`, [row.id]) as Promise<[{ total: number }]>,
    ]);
    return { runs: rows.map(runView), total };
  }

  private checkedCron(principal: Principal, expression: string, timezone: string, now: Date): CronSchedule {
    const cron = new CronSchedule(expression, timezone);
    if (!cron.nextAfter(now)) throw AppException.invalidRequest('The cron expression never runs again', { parameter: 'cron' });
    const minimum = ORCHESTRATION_LIMITS[principal.tier].scheduleMinIntervalSeconds;
    const shortest = cron.shortestIntervalSeconds(now);
    if (shortest < minimum) {
      throw AppException.invalidRequest(`The ${principal.tier} tier runs a schedule at most every ${minimum} s; this expression runs ${shortest} s apart`, {
        parameter: 'cron',
        min_interval_seconds: minimum,
        interval_seconds: shortest,
      });
    }
    return cron;
  }

  private async find(principal: Principal, id: string): Promise<Schedule> {
    return ownedBy(await this.schedules.findOneBy({ id, ...visibleTo(principal) }), 'Schedule', id);
  }
}
