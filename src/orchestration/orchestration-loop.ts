import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { ScheduleTicker } from './schedule-ticker';
import { TriggerLaunches } from './trigger-launches';

/**
 * Every ORCHESTRATION_POLL_MS, in processes of the worker role (the embedded process holds both
 * roles; placed as the WebhookDispatcher is): claims due schedule ticks, starts pending schedule
 * runs, then pending trigger events. Any number of processes may run it at once
 * (docs/orchestration.md#exactly-once-ticks). One pass at a time per process; shutdown waits for it.
 */
@Injectable()
export class OrchestrationLoop implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OrchestrationLoop.name);
  private timer?: NodeJS.Timeout;
  private passing: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly schedules: ScheduleTicker,
    private readonly triggers: TriggerLaunches,
    private readonly config: AppConfig,
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
    for (const [what, step] of steps) {
      // One failing (the database away) does not hold up the others; the next pass tries again.
      await step().catch((err: Error) => this.logger.error(`${what} failed: ${err.message}`));
    }
  }
}
