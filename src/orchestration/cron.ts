import { Cron } from 'croner';
import { AppException } from '../common/errors';

/** How many upcoming runs the answers show, and how many the minimum-interval check looks at. */
export const SHOWN_NEXT_RUNS = 5;
const CHECKED_RUNS = 60;

/**
 * A schedule's cron expression in its IANA time zone (croner: five fields, or six with seconds
 * first). Times are wall-clock times of the zone, so a daily 02:30 stays 02:30 across DST; on the
 * spring-forward day a time inside the skipped hour runs once, an hour later (03:30), and on the
 * fall-back day a time inside the repeated hour runs once, on its second occurrence (standard time).
 */
export class CronSchedule {
  private readonly cron: Cron;

  constructor(
    readonly expression: string,
    readonly timezone: string,
  ) {
    try {
      this.cron = new Cron(expression, { timezone, paused: true });
      this.cron.nextRun();
    } catch (err) {
      throw new AppException('INVALID_REQUEST', `Invalid schedule: ${(err as Error).message}`, { details: { parameter: /time zone/i.test((err as Error).message) ? 'timezone' : 'cron' } });
    }
  }

  /** The first run strictly after `after`; null when the expression never runs again. */
  nextAfter(after: Date): Date | null {
    return this.cron.nextRun(after);
  }

  /** The next `count` runs strictly after `after`. */
  nextRuns(count: number, after: Date): Date[] {
    return this.cron.nextRuns(count, after);
  }

  /** The shortest gap, in seconds, between two of the next runs after `after` (Infinity when it runs at most once). */
  shortestIntervalSeconds(after: Date): number {
    const runs = this.nextRuns(CHECKED_RUNS, after);
    let shortest = Infinity;
    for (let i = 1; i < runs.length; i++) shortest = Math.min(shortest, (runs[i].getTime() - runs[i - 1].getTime()) / 1000);
    return shortest;
  }
}
