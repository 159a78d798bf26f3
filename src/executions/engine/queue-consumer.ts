import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { RESTART_ERROR, reportAbandoned } from './abandoned';
import { ExecutionReconciler } from './execution-reconciler';
import { ExecutionRunner, terminal } from './execution-runner';
import { ExecutionsStore } from './executions.store';
import { ExecutionQueue } from './queue/execution-queue';

/**
 * The worker role: consume the queue and reconcile it with the database. Stopping is the
 * ExecutionLifecycle's drain, shared with API processes.
 */
@Injectable()
export class QueueConsumer implements OnApplicationBootstrap {
  private readonly logger = new Logger(QueueConsumer.name);

  constructor(
    private readonly config: AppConfig,
    private readonly queue: ExecutionQueue,
    private readonly runner: ExecutionRunner,
    private readonly store: ExecutionsStore,
    private readonly reconciler: ExecutionReconciler,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.REDIS_URL) await this.recoverEmbedded();
    this.queue.consume(
      (job) => this.runner.runJob(job),
      (executionId) => this.runner.markLost(executionId),
      this.config.WORKER_CONCURRENCY,
    );
    this.reconciler.start();
  }

  /**
   * Embedded mode keeps its queue in memory, so a restart loses it: executions that were running
   * end as outcome unknown (their tool had started); every queued one is queued again from its row
   * (its sealed credentials included), except one whose credentials cannot be opened.
   */
  private async recoverEmbedded(): Promise<void> {
    // A workflow run is not a tool call: its engine resumes it from its steps (docs/workflows.md#durability).
    const running = (await this.store.active()).filter((execution) => execution.status === 'running' && execution.kind !== 'workflow');
    for (const execution of running) {
      const ended = await this.store.finish(execution.id, terminal('error', null, RESTART_ERROR), execution.started_at);
      if (ended.error?.message === RESTART_ERROR.message) reportAbandoned(this.logger, execution.id, 'restart', 'interrupted');
    }
    const requeued = await this.reconciler.pass(0, 'restart');
    if (running.length + requeued > 0) this.logger.warn(`Recovered the previous run's executions: ${running.length} interrupted, ${requeued} queued again`);
  }
}
