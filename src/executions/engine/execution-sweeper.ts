import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import type { ErrorBody } from '../../common/errors';
import { ExecutionEventBus, statusEvent } from './events/execution-events';
import { ExecutionsStore, type OverdueReason } from './executions.store';
import { outcomeUnknown, reportAbandoned } from './abandoned';

export const OVERDUE_RUNNING_ERROR = outcomeUnknown(
  'The execution did not record its end by its deadline (its timeout plus a grace period): the process running it stopped or lost the database after its tool started, so it may have run.',
);

export const OVERDUE_QUEUED_ERROR: ErrorBody = {
  code: 'INTERNAL_ERROR',
  message: 'The execution waited in the queue longer than the service allows (QUEUE_MAX_WAIT_SECONDS) without a worker taking it. Retry it.',
  retryable: true,
};

export const UNANSWERED_ERROR: ErrorBody = {
  code: 'INVALID_INPUT',
  message: "The tool's questions to its caller went unanswered longer than the service waits (QUEUE_MAX_WAIT_SECONDS). Call it again.",
  retryable: false,
  details: { parameter: 'input_responses' },
};

/**
 * Every accepted execution reaches a terminal state, even when the process running it died or
 * could not write its end (the database was down at that moment): each process periodically ends
 * the executions past their deadline. The update is conditional, so processes sweeping at once,
 * or a runner finishing late, cannot both win.
 */
@Injectable()
export class ExecutionSweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ExecutionSweeper.name);
  private timer?: NodeJS.Timeout;
  private sweeping = false;

  constructor(
    private readonly config: AppConfig,
    private readonly store: ExecutionsStore,
    private readonly events: ExecutionEventBus,
  ) {}

  onApplicationBootstrap(): void {
    const every = this.config.SWEEP_INTERVAL_SECONDS * 1000;
    if (every > 0) this.timer = setInterval(() => void this.sweep(), every).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** Ends what is overdue now; answers how many. A database still down is logged and tried next time. */
  async sweep(now = new Date()): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    try {
      const ended = await this.store.endOverdue(now, this.config.SWEEP_GRACE_SECONDS, this.config.QUEUE_MAX_WAIT_SECONDS, {
        running: OVERDUE_RUNNING_ERROR,
        queued: OVERDUE_QUEUED_ERROR,
        unanswered: UNANSWERED_ERROR,
      });
      let count = 0;
      for (const [reason, executions] of Object.entries(ended) as Array<[OverdueReason, typeof ended.running]>) {
        for (const execution of executions) {
          this.events.publish(statusEvent(execution));
          reportAbandoned(this.logger, execution.id, 'sweeper', `overdue_${reason}`);
          count++;
        }
      }
      return count;
    } catch (err) {
      this.logger.error(`Sweeping overdue executions failed: ${(err as Error).message}`);
      return 0;
    } finally {
      this.sweeping = false;
    }
  }
}
