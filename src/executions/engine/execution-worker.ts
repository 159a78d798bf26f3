import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppConfig } from '../../config/app-config';
import { ExecutionEventBus } from './events/execution-events';
import { RESTART_ERROR, reportAbandoned } from './abandoned';
import { ExecutionReconciler } from './execution-reconciler';
import { ExecutionRunner, terminal } from './execution-runner';
import { ExecutionsStore } from './executions.store';
import { ExecutionQueue } from './queue/execution-queue';

/** After the grace period, how long aborted executions get to record their end. */
const ABORT_SETTLE_MS = 5_000;

/**
 * Process-level duties of the execution engine: consume the queue (worker role), abort local
 * executions when a cancel arrives from any process, recover after an embedded restart, and
 * drain gracefully on SIGTERM.
 */
@Injectable()
export class ExecutionWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(ExecutionWorker.name);
  private unsubscribe?: () => void;

  constructor(
    private readonly config: AppConfig,
    private readonly queue: ExecutionQueue,
    private readonly runner: ExecutionRunner,
    private readonly events: ExecutionEventBus,
    private readonly store: ExecutionsStore,
    private readonly reconciler: ExecutionReconciler,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.unsubscribe = this.events.subscribeAll((event) => {
      if (event.type === 'status' && event.status === 'cancelled') this.runner.abort(event.execution_id);
    });
    if (!this.config.runsWorker) {
      // An API process beats too, so that a lost one's sync executions end at once.
      if (this.config.REDIS_URL) this.reconciler.start(false);
      return;
    }
    if (!this.config.REDIS_URL) await this.recoverEmbedded();
    this.queue.consume(
      (job) => this.runner.runJob(job),
      (executionId) => this.runner.markLost(executionId),
      this.config.WORKER_CONCURRENCY,
    );
    this.reconciler.start();
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

  /**
   * Embedded mode keeps its queue in memory, so a restart loses it: executions that were running
   * end as outcome unknown (their tool had started); every queued one is queued again from its row
   * (its sealed credentials included), except one whose credentials cannot be opened.
   */
  private async recoverEmbedded(): Promise<void> {
    const running = (await this.store.active()).filter((execution) => execution.status === 'running');
    for (const execution of running) {
      const ended = await this.store.finish(execution.id, terminal('error', null, RESTART_ERROR), execution.started_at);
      if (ended.error?.message === RESTART_ERROR.message) reportAbandoned(this.logger, execution.id, 'restart', 'interrupted');
    }
    const requeued = await this.reconciler.pass(0, 'restart');
    if (running.length + requeued > 0) this.logger.warn(`Recovered the previous run's executions: ${running.length} interrupted, ${requeued} queued again`);
  }
}
