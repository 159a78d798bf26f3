import { Logger } from '@nestjs/common';
import { ExecutionJob, ExecutionQueue, JobHandler, queueUnavailable, withinGrace } from './execution-queue';

/** A bound on waiting jobs, so a flood answers 503 instead of exhausting memory. */
const MAX_WAITING = 100_000;

/** The embedded executor: a FIFO in this process, run `concurrency` at a time. */
export class InProcessQueue extends ExecutionQueue {
  private readonly logger = new Logger(InProcessQueue.name);
  private readonly waiting: ExecutionJob[] = [];
  private readonly enqueuedAt = new WeakMap<ExecutionJob, number>();
  /** Executions waiting or running here: the reconciler asks about each queued row. */
  private readonly held = new Set<string>();
  private handler?: JobHandler;
  private concurrency = 1;
  private running = 0;
  private stopped = false;
  private idle?: () => void;

  async enqueue(job: ExecutionJob): Promise<void> {
    if (this.stopped) throw queueUnavailable('the service is shutting down');
    if (this.waiting.length >= MAX_WAITING) throw queueUnavailable(`${MAX_WAITING} executions are already waiting`);
    this.waiting.push(job);
    this.held.add(job.executionId);
    this.enqueuedAt.set(job, Date.now());
    this.pump();
  }

  async remove(executionId: string): Promise<boolean> {
    const index = this.waiting.findIndex((job) => job.executionId === executionId);
    if (index === -1) return false;
    this.waiting.splice(index, 1);
    this.held.delete(executionId);
    return true;
  }

  consume(handler: JobHandler, _onLost: unknown, concurrency: number): void {
    this.handler = handler;
    this.concurrency = concurrency;
    this.pump();
  }

  async pending({ executionId }: Pick<ExecutionJob, 'executionId'>): Promise<boolean> {
    return this.held.has(executionId);
  }

  /** One process is the only worker: it cannot see itself die. */
  async heartbeat(): Promise<string[]> {
    return [];
  }

  async backlog(): Promise<{ waiting: number; oldestAgeSeconds: number }> {
    const oldest = this.waiting[0] && this.enqueuedAt.get(this.waiting[0]);
    return { waiting: this.waiting.length, oldestAgeSeconds: oldest ? (Date.now() - oldest) / 1000 : 0 };
  }

  async ping(): Promise<void> {
    if (this.stopped) throw new Error('shutting down');
  }

  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    if (this.running === 0) return;
    await withinGrace(new Promise<void>((resolve) => (this.idle = resolve)), graceMs);
  }

  private pump(): void {
    while (this.handler && !this.stopped && this.running < this.concurrency && this.waiting.length > 0) {
      const job = this.waiting.shift()!;
      this.running++;
      this.handler(job)
        .catch((err: Error) => this.logger.error(`execution ${job.executionId} failed to run: ${err.stack ?? err.message}`))
        .finally(() => {
          this.running--;
          this.held.delete(job.executionId);
          if (this.running === 0) this.idle?.();
          this.pump();
        });
    }
  }
}
