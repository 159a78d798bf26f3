import { AppException } from '../common/errors';
import { CronSchedule } from './cron';

describe('CronSchedule', () => {
  it('keeps a daily 02:30 in Europe/Berlin on wall-clock time across the spring-forward day', () => {
    const schedule = new CronSchedule('30 2 * * *', 'Europe/Berlin');
    const runs = schedule.nextRuns(3, new Date('2026-03-28T00:00:00Z')).map((d) => d.toISOString());
    // 28 March 02:30 CET; 29 March 02:30 does not exist (02:00 → 03:00): once, at 03:30 CEST; 30 March 02:30 CEST.
    expect(runs).toEqual(['2026-03-28T01:30:00.000Z', '2026-03-29T01:30:00.000Z', '2026-03-30T00:30:00.000Z']);
  });

  // 25 October 02:30 happens twice (CEST, then CET): once, at 02:30 CET.
  it('runs a time of the repeated hour once on the fall-back day', () => {
    const schedule = new CronSchedule('30 2 * * *', 'Europe/Berlin');
    const runs = schedule.nextRuns(3, new Date('2026-10-24T12:00:00Z')).map((d) => d.toISOString());
    expect(runs).toEqual(['2026-10-25T01:30:00.000Z', '2026-10-26T01:30:00.000Z', '2026-10-27T01:30:00.000Z']);
  });

  it('answers the first run strictly after a time', () => {
    const schedule = new CronSchedule('*/15 * * * *', 'UTC');
    expect(schedule.nextAfter(new Date('2026-01-01T10:15:00Z'))?.toISOString()).toBe('2026-01-01T10:30:00.000Z');
  });

  it('measures the shortest interval, seconds field included', () => {
    expect(new CronSchedule('*/5 * * * *', 'UTC').shortestIntervalSeconds(new Date('2026-01-01T00:00:00Z'))).toBe(300);
    expect(new CronSchedule('*/10 * * * * *', 'UTC').shortestIntervalSeconds(new Date('2026-01-01T00:00:00Z'))).toBe(10);
    expect(new CronSchedule('0 9 1,2 * *', 'UTC').shortestIntervalSeconds(new Date('2026-01-01T00:00:00Z'))).toBe(86_400);
  });

  it.each([
    ['not a cron', 'UTC', 'cron'],
    ['61 * * * *', 'UTC', 'cron'],
    ['* * * * *', 'Mars/Olympus', 'timezone'],
  ])('refuses %s in %s as a 400 naming %s', (expression, timezone, parameter) => {
    let thrown: unknown;
    try {
      new CronSchedule(expression, timezone);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AppException);
    expect((thrown as AppException).status).toBe(400);
    expect((thrown as AppException).options.details).toEqual({ parameter });
  });
});
