import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { executionsReconciled, queueAudits, workerHeartbeats } from '../../common/probes';
import { ExecutionRunner } from './execution-runner';
import { ExecutionsStore } from './executions.store';
import { PROCESS_ID } from './process-claim';
import { ExecutionQueue, jobIdOf } from './queue/execution-queue';

/**
 * The database is the source of truth, the queue is reconciled with it: every worker process,
 * every RECONCILE_INTERVAL_SECONDS, re-adds the job of each queued execution (waiting longer than
 * RECONCILE_MIN_AGE_SECONDS, at most RECONCILE_BATCH per pass) that the queue no longer holds —
 * Redis lost its data, or the job failed while the database was away. Safe with any number of
 * workers: a job is keyed by its execution, so adding it twice queues it once, and a run starts
 * only by moving its row from `queued` (conditional), so it runs once.
 *
 * Every process with a shared queue (API ones too) beats here; the one that finds a process has
 * stopped ends the sync executions that process was running. API-only processes only beat.
 */
@Injectable()
export class ExecutionReconciler {
  private readonly logger = new Logger(ExecutionReconciler.name);
  private timer?: NodeJS.Timeout;
  private reconciling = false;
  private passing = false;

  constructor(
    private readonly config: AppConfig,
    private readonly store: ExecutionsStore,
    private readonly queue: ExecutionQueue,
    private readonly runner: ExecutionRunner,
  ) {}

  /**
   * Passes every RECONCILE_INTERVAL_SECONDS; `reconcile` false: heartbeats only (every process
   * with a shared queue beats). Starting again to reconcile (a worker) replaces the heartbeats.
   */
  start(reconcile = true): void {
    const every = this.config.RECONCILE_INTERVAL_SECONDS * 1000;
    if (every === 0 || (this.timer && (this.reconciling || !reconcile))) return;
    this.stop();
    this.reconciling = reconcile;
    const pass = () => void (reconcile ? this.pass() : this.beat().catch((err: Error) => this.logger.error(`Heartbeat failed: ${err.message}`)));
    pass(); // a first heartbeat at once: a process that dies young is still missed
    this.timer = setInterval(pass, every).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * One pass: a heartbeat (and a report of the workers that stopped beating), then queued rows
   * checked against the queue. `minAgeSeconds` 0 takes every queued row (an embedded start, whose
   * queue was empty). Answers how many were queued again; failures are logged and retried next pass.
   */
  async pass(minAgeSeconds = this.config.RECONCILE_MIN_AGE_SECONDS, by: 'reconciler' | 'restart' = 'reconciler'): Promise<number> {
    if (this.passing) return 0;
    this.passing = true;
    try {
      await this.beat();
      const now = new Date();
      const queued = await this.store.queuedBefore(new Date(now.getTime() - minAgeSeconds * 1000), this.config.RECONCILE_BATCH);
      // Asked together: the queue client writes them without waiting for each answer.
      const pending = await Promise.all(queued.map((execution) => this.queue.pending(this.runner.jobOf(execution))));
      // Under a backlog a worker may take and finish a job between the read above and its check:
      // only a row still queued after its check lacks a job (a job starts by moving its row out of queued).
      const stillQueued = await this.store.stillQueued(queued.filter((_, i) => !pending[i]).map(({ id }) => id));
      let withoutJob = 0;
      let requeued = 0;
      for (const execution of queued.filter(({ id }) => stillQueued.has(id))) {
        const job = this.runner.jobOf(execution);
        withoutJob++;
        if (await this.runner.requeue(execution, by)) {
          requeued++;
          executionsReconciled.publish({});
          this.logger.warn(`Execution ${execution.id} was queued with no job behind it; queued again as job ${jobIdOf(job)}`);
        }
      }
      queueAudits.publish({ withoutJob, oldestQueuedAgeSeconds: await this.store.oldestQueuedAgeSeconds(new Date()) });
      return requeued;
    } catch (err) {
      this.logger.error(`Reconciling queued executions with the queue failed: ${(err as Error).message}`);
      return 0;
    } finally {
      this.passing = false;
    }
  }

  private async beat(): Promise<void> {
    const lost = await this.queue.heartbeat(PROCESS_ID, this.config.RECONCILE_INTERVAL_SECONDS * 3000);
    for (const id of lost) {
      const syncEnded = await this.runner.endLostProcess(id);
      this.logger.error(`Process ${id} stopped its heartbeat (killed, hung or cut off): ${syncEnded} sync execution(s) it ran ended as outcome unknown; its queued jobs end once their locks lapse`);
    }
    workerHeartbeats.publish({ lost });
  }
}
