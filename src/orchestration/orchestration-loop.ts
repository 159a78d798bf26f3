import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { retentionDaysSql } from '../identity/tiers';
import { ScheduleTicker } from './schedule-ticker';
import { TriggerLaunches } from './trigger-launches';

/**
 * Every ORCHESTRATION_POLL_MS, in processes of the worker role (the embedded process holds both
 * roles; placed as the WebhookDispatcher is): claims due schedule ticks, starts pending schedule
 * runs, then pending trigger events; once an hour, purges the logs past their retention. Any number of processes may run it at once
 * (docs/orchestration.md#exactly-once-ticks). One pass at a time per process; shutdown waits for it.
 */
/** How often a process purges the old rows of the runs and events logs. */
const PURGE_EVERY_MS = 3_600_000;

@Injectable()
export class OrchestrationLoop implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OrchestrationLoop.name);
  private timer?: NodeJS.Timeout;
  private passing: Promise<void> | null = null;
  private stopped = false;
  private purgedAt = 0;

  constructor(
    private readonly schedules: ScheduleTicker,
    private readonly triggers: TriggerLaunches,
    private readonly config: AppConfig,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.runsWorker || this.config.ORCHESTRATION_POLL_MS === 0) return;
    this.timer = setInterval(() => void this.pass(), this.config.ORCHESTRATION_POLL_MS).unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.passing;
  }

  async pass(now = new Date()): Promise<void> {
    if (this.passing || this.stopped) return;
    this.passing = this.run(now).finally(() => {
      this.passing = null;
    });
    await this.passing;
  }

  private async run(now: Date): Promise<void> {
    const steps: Array<[string, () => Promise<unknown>]> = [
      ['Claiming schedule ticks', () => this.schedules.claimDue(now)],
      ['Starting schedule runs', () => this.schedules.startPending(now)],
      ['Starting trigger events', () => this.triggers.startPending(now)],
    ];
    if (now.getTime() - this.purgedAt >= PURGE_EVERY_MS) steps.push(['Purging old schedule runs and trigger events', () => this.purgeExpired(now)]);
    for (const [what, step] of steps) {
      // One failing (the database away) does not hold up the others; the next pass tries again.
      await step().catch((err: Error) => this.logger.error(`${what} failed: ${err.message}`));
    }
  }

  /** Ended schedule runs and trigger events older than their account's retention, as executions are purged (docs/API.md#execution-lifecycle). */
  async purgeExpired(now: Date): Promise<void> {
    this.purgedAt = now.getTime();
    for (const table of ['schedule_runs', 'trigger_events']) {
      await this.db.query(
        `DELETE FROM ${table} t USING accounts a
          WHERE t.account_id = a.id AND t.status <> 'pending'
            AND t.created_at < $1::timestamptz - make_interval(days => ${retentionDaysSql('a')})`,
        [now.toISOString()],
      );
    }
  }
}
