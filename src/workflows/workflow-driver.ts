import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { ExecutionEventBus, type ExecutionEvent } from '../executions/engine/events/execution-events';
import { RunStore } from './run-store';
import { WorkflowEngine } from './workflow-engine';

/** Runs one sweep takes up at most. */
const SWEEP_BATCH = 100;

/** Statuses that move a run: a step's end or question, the run's own end (its steps are cancelled). */
const MOVES_A_RUN = new Set(['success', 'error', 'cancelled', 'input_required']);

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
    if (event.run_id) await this.engine.advance(event.run_id);
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
