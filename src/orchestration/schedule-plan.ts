import type { CronSchedule } from './cron';
import type { CatchUpPolicy } from './schedule.entity';

/** A tick due longer ago than this, or one followed by other due ticks, was missed while no process ticked. */
export const ON_TIME_GRACE_MS = 60_000;
/** How far back the latest due tick is looked for in one step; past the last span the due tick itself is taken. */
const LOOKBACK_SPANS_MS = [600_000, 3_600_000, 86_400_000, 40 * 86_400_000, 400 * 86_400_000];
/**
 * Due ticks are counted up to this many (a count for the run's reason, not used otherwise): one
 * step of the cron library takes about 0.2 ms, and a frequent schedule down for a week has tens
 * of thousands.
 */
export const MAX_COUNTED_TICKS = 100;

export interface TickPlan {
  /** The tick recorded: the one started, or (catch_up none, missed) the one recorded as missed. */
  tick: Date;
  /** `run`: start it; `missed`: record that ticks passed while no process ran, start nothing. */
  outcome: 'run' | 'missed';
  /** How many due ticks this claim covers (1 when on time), counted up to MAX_COUNTED_TICKS + 1. */
  covered: number;
  /** Missed while no process ran: more than one due tick, or the one later than ON_TIME_GRACE_MS. */
  late: boolean;
  /** The schedule's next tick after this claim; null when the expression never runs again. */
  next: Date | null;
}

/**
 * What one claim of a schedule whose tick `due` has come does at `now`. On time (the only due
 * tick, less than ON_TIME_GRACE_MS late): run it. Missed while everything was down: `catch_up:
 * last` runs once, for the latest due tick; `none` records the latest as missed and runs nothing.
 * Either way the schedule moves on past `now`, so downtime never turns into a burst of runs.
 */
export function planTick(cron: CronSchedule, due: Date, catchUp: CatchUpPolicy, now: Date): TickPlan {
  const latest = latestDue(cron, due, now);
  const covered = latest.getTime() === due.getTime() ? 1 : 1 + countBetween(cron, due, latest);
  const late = covered > 1 || now.getTime() - due.getTime() > ON_TIME_GRACE_MS;
  return { tick: latest, outcome: !late || catchUp === 'last' ? 'run' : 'missed', covered, late, next: cron.nextAfter(latest) };
}

/** The latest tick at or before `now` (at least `due`). */
function latestDue(cron: CronSchedule, due: Date, now: Date): Date {
  for (const span of LOOKBACK_SPANS_MS) {
    const from = new Date(Math.max(due.getTime(), now.getTime() - span) - 1);
    let tick = cron.nextAfter(from);
    if (!tick || tick > now) continue;
    for (let next = cron.nextAfter(tick); next && next <= now; next = cron.nextAfter(tick)) tick = next;
    return tick;
  }
  return due;
}

/** Ticks strictly between `from` and `to`, plus `to` itself, counted up to MAX_COUNTED_TICKS. */
function countBetween(cron: CronSchedule, from: Date, to: Date): number {
  let count = 0;
  for (let tick = cron.nextAfter(from); tick && tick <= to && count < MAX_COUNTED_TICKS; tick = cron.nextAfter(tick)) count++;
  return count;
}
