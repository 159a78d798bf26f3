import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppConfig } from '../../config/app-config';
import { credentialInputNames } from '../../tools/sdk';
import { ToolCatalogue } from '../../tools/tool-registry';
import { ExecutionEventBus } from './events/execution-events';
import { ExecutionRunner, LOST_WORKER_ERROR, terminal } from './execution-runner';
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
    private readonly registry: ToolCatalogue,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.unsubscribe = this.events.subscribeAll((event) => {
      if (event.type === 'status' && event.status === 'cancelled') this.runner.abort(event.execution_id);
    });
    if (!this.config.runsWorker) return;
    if (!this.config.REDIS_URL) await this.recoverEmbedded();
    this.queue.consume(
      (job) => this.runner.runJob(job),
      (executionId) => this.runner.markLost(executionId),
      this.config.WORKER_CONCURRENCY,
    );
  }

  /** SIGTERM: take no more work, let running executions finish within the grace period, abort the rest. */
  async beforeApplicationShutdown(): Promise<void> {
    this.unsubscribe?.();
    await this.queue.stop(this.config.SHUTDOWN_GRACE_SECONDS * 1000);
    const aborted = this.runner.abortAll();
    if (aborted === 0) return;
    this.logger.warn(`${aborted} execution(s) still running after the grace period were aborted`);
    for (let waited = 0; this.runner.runningHere > 0 && waited < ABORT_SETTLE_MS; waited += 50) await sleep(50);
  }

  /**
   * Embedded mode keeps its queue in memory, so a restart loses it: executions that were running
   * end in a retryable error; queued ones are queued again from their stored input, unless that
   * input had secrets (never stored), in which case they end in error too.
   */
  private async recoverEmbedded(): Promise<void> {
    const stranded = await this.store.active();
    for (const execution of stranded) {
      const tool = this.registry.has(execution.tool_id) ? this.registry.get(execution.tool_id) : null;
      // A stored input lacks its credentials (redactStoredInput): such a call cannot be re-run from it.
      const rerunnable = execution.status === 'queued' && tool && credentialInputNames(tool.definition.inputs, execution.input).length === 0;
      if (rerunnable) {
        await this.queue.enqueue({ executionId: execution.id, toolId: execution.tool_id, input: execution.input, timeoutSeconds: execution.timeout_seconds ?? tool.definition.timeout });
      } else {
        await this.store.finish(execution.id, terminal('error', null, { ...LOST_WORKER_ERROR, message: 'The service stopped before this execution finished; retry it.' }), execution.started_at);
      }
    }
    if (stranded.length > 0) this.logger.warn(`Recovered ${stranded.length} execution(s) left active by the previous run`);
  }
}
