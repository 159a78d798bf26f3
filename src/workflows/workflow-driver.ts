import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { ExecutionEventBus, type ExecutionEvent } from '../executions/engine/events/execution-events';
import { ExecutionsStore } from '../executions/engine/executions.store';
import { RunStore } from './run-store';
import { WorkflowEngine } from './workflow-engine';

/** Runs one sweep takes up at most. */
const SWEEP_BATCH = 100;

/** Step statuses that can move a run: an end, a question, or answers (the step is queued again). */
const MOVES_A_RUN = new Set(['success', 'error', 'cancelled', 'input_required', 'queued']);

/**
 * Keeps workflow runs moving in a process that consumes the queue (docs/workflows.md#durability):
 * each step's status event advances its run, and every RECONCILE_INTERVAL_SECONDS (and once at
 * start, which resumes an embedded service's runs) a sweep advances every active run nobody holds
 * — a run whose process died, or whose event was lost — and cancels the steps of runs that ended.
 */
@Injectable()
export class WorkflowDriver implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(WorkflowDriver.name);
  private timer?: NodeJS.Timeout;
  private unsubscribe?: () => void;
  private sweeping = false;

  constructor(
    private readonly config: AppConfig,
    private readonly events: ExecutionEventBus,
    private readonly store: ExecutionsStore,
    private readonly runs: RunStore,
    private readonly engine: WorkflowEngine,
  ) {}

  onApplicationBootstrap(): void {
    this.unsubscribe = this.events.subscribeAll((event) => void this.heard(event));
    void this.sweep();
    const every = this.config.RECONCILE_INTERVAL_SECONDS * 1000;
    if (every > 0) this.timer = setInterval(() => void this.sweep(), every).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
    this.unsubscribe?.();
    this.engine.stop();
  }

  private async heard(event: ExecutionEvent): Promise<void> {
    if (event.type !== 'status' || !MOVES_A_RUN.has(event.status)) return;
    try {
      const runId = this.engine.knownRunOf(event.execution_id) ?? (await this.store.workflowRunOf(event.execution_id));
      if (event.status !== 'input_required' && event.status !== 'queued') this.engine.forget(event.execution_id);
      if (runId) await this.engine.advance(runId);
    } catch (err) {
      this.logger.warn(`Could not follow execution ${event.execution_id} to its workflow run: ${(err as Error).message}`);
    }
  }

  /** Advances the runs nobody holds; answers how many it looked at. */
  async sweep(): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    try {
      const ids = [...(await this.runs.unattended(new Date(), SWEEP_BATCH)), ...(await this.runs.endedWithActiveSteps(SWEEP_BATCH))];
      for (const id of ids) await this.engine.advance(id);
      return ids.length;
    } catch (err) {
      this.logger.error(`Sweeping workflow runs failed: ${(err as Error).message}`);
      return 0;
    } finally {
      this.sweeping = false;
    }
  }
}
