import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppConfig } from '../../config/app-config';
import { executionsSettled } from '../../common/probes';
import { EXECUTION_EVENTS } from '../../webhooks/webhook-outbox';
import type { ExecutionStatus } from './execution.entity';
import { ExecutionEventBus } from './events/execution-events';
import { ExecutionReconciler } from './execution-reconciler';
import { ExecutionRunner } from './execution-runner';
import { ExecutionQueue } from './queue/execution-queue';

/** The statuses whose end writes webhook deliveries (src/webhooks/webhook-outbox.ts). */
const ANNOUNCED: ReadonlySet<ExecutionStatus> = new Set(Object.keys(EXECUTION_EVENTS) as ExecutionStatus[]);

/** After the grace period, how long aborted executions get to record their end. */
const ABORT_SETTLE_MS = 5_000;

/**
 * What every process running executions does, whatever its role (an API process runs sync
 * calls): abort local executions when a cancel arrives from any process, beat on a shared queue
 * (so that a lost process's sync executions end at once), tell the webhook dispatcher when an
 * execution's end may have queued deliveries, and drain gracefully on SIGTERM.
 * Consuming the queue is the worker role's (QueueConsumer).
 */
@Injectable()
export class ExecutionLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(ExecutionLifecycle.name);
  private unsubscribe?: () => void;

  constructor(
    private readonly config: AppConfig,
    private readonly queue: ExecutionQueue,
    private readonly runner: ExecutionRunner,
    private readonly events: ExecutionEventBus,
    private readonly reconciler: ExecutionReconciler,
  ) {}

  onApplicationBootstrap(): void {
    this.unsubscribe = this.events.subscribeAll((event) => {
      if (event.type !== 'status') return;
      if (event.status === 'cancelled') this.runner.abort(event.execution_id);
      if (executionsSettled.hasSubscribers && ANNOUNCED.has(event.status)) executionsSettled.publish({});
    });
    // An in-process queue has no other process to beat for.
    if (this.config.REDIS_URL) this.reconciler.start(false);
  }

  /** SIGTERM: take no more work, let running executions finish within the grace period, abort the rest. */
  async beforeApplicationShutdown(): Promise<void> {
    this.unsubscribe?.();
    this.reconciler.stop();
    await this.queue.stop(this.config.SHUTDOWN_GRACE_SECONDS * 1000);
    const aborted = this.runner.abortAll();
    if (aborted === 0) return;
    this.logger.warn(`${aborted} execution(s) still running after the grace period were aborted`);
    for (let waited = 0; this.runner.runningHere > 0 && waited < ABORT_SETTLE_MS; waited += 50) await sleep(50);
  }
}
