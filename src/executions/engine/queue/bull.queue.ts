import { Logger } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { AppException } from '../../../common/errors';
import { OutageLog } from '../../../common/outages';
import { ExecutionJob, ExecutionQueue, jobIdOf, JobHandler, LostJobHandler, queueUnavailable, withinGrace } from './execution-queue';

export const EXECUTIONS_QUEUE = 'executions';
/** How long an enqueue may wait for Redis before the caller gets a 503. */
const ENQUEUE_TIMEOUT_MS = 2_000;
const KEEP_FAILED_JOBS = 1_000;
/**
 * A job whose handler throws did not start its tool (its `running` write failed: the database
 * was away), so Bull tries it again, 1, 2, 4, 8 s later; past that the reconciler re-adds it.
 */
const JOB_ATTEMPTS = 5;
const JOB_BACKOFF_MS = 1_000;
/** States in which a job will still run, or runs. */
const LIVE_STATES = new Set(['waiting', 'active', 'delayed', 'paused']);

/**
 * Bull on Redis: jobs are keyed by execution id (and answer count, for runs after answers) and removed once done,
 * since the database holds the state. A job whose worker stops renewing its lock is not re-run
 * (tools may have side effects): it is reported lost and its execution ends in a retryable error.
 */
export class BullExecutionQueue extends ExecutionQueue {
  private readonly logger = new Logger(BullExecutionQueue.name);
  private stopping = false;

  constructor(private readonly queue: Queue<ExecutionJob>) {
    super();
    // Each client errors at every reconnect attempt: one line when Redis goes, one when it is back.
    const outages = new OutageLog({ redis: () => queue.client.ping() });
    queue.on('error', (err) => outages.report('redis', err));
    // Bull 4's process() names its blocking connection once the command connection is up and
    // leaves that promise unhandled: a stop before the blocking connection is up rejected it
    // ('Connection is closed'), an unhandled rejection that ends the process.
    const named = queue as Queue<ExecutionJob> & { setWorkerName(): Promise<void> };
    const setWorkerName = named.setWorkerName.bind(queue);
    named.setWorkerName = () => setWorkerName().catch((err: Error) => this.unlessStopping(err));
  }

  async enqueue(job: ExecutionJob): Promise<void> {
    if (this.queue.client.status !== 'ready') throw queueUnavailable(`Redis is ${this.queue.client.status}`);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(queueUnavailable('Redis did not answer in time')), ENQUEUE_TIMEOUT_MS)));
    try {
      // Failed jobs are kept a while: a stalled job's 'failed' event needs the job to name its execution.
      // A run after answers gets an id of its own: the run before may not be removed yet, and Bull ignores a job id it holds.
      const options = { jobId: jobIdOf(job), removeOnComplete: true, removeOnFail: KEEP_FAILED_JOBS, attempts: JOB_ATTEMPTS, backoff: { type: 'exponential', delay: JOB_BACKOFF_MS } };
      await Promise.race([this.queue.add(job, options), timeout]);
    } catch (err) {
      throw err instanceof AppException ? err : queueUnavailable((err as Error).message);
    } finally {
      clearTimeout(timer);
    }
  }

  async remove(executionId: string): Promise<boolean> {
    const job = await this.queue.getJob(executionId);
    if (!job || (await job.isActive())) return false;
    try {
      await job.remove();
      return true;
    } catch {
      return false; // a worker took it meanwhile: the cancel event reaches that worker
    }
  }

  async pending(job: Pick<ExecutionJob, 'executionId' | 'answered'>): Promise<boolean> {
    const held = await this.queue.getJob(jobIdOf(job));
    if (!held) return false;
    if (LIVE_STATES.has(await held.getState())) return true;
    await held.remove(); // failed or completed: Bull would ignore an add under its id
    return false;
  }

  async heartbeat(workerId: string, staleMs: number): Promise<string[]> {
    const key = this.queue.toKey('workers');
    const now = Date.now();
    const client = this.queue.client;
    await client.zadd(key, now, workerId);
    const stale = await client.zrangebyscore(key, 0, now - staleMs);
    const lost: string[] = [];
    // ZREM answers 1 to one caller only: one process reports each dead worker.
    for (const id of stale) if ((await client.zrem(key, id)) === 1) lost.push(id);
    return lost;
  }

  consume(handler: JobHandler, onLost: LostJobHandler, concurrency: number): void {
    this.queue.on('failed', (job: Job<ExecutionJob> | null, err: Error) => {
      if (job && /stalled/i.test(err.message)) onLost(job.data.executionId).catch((e: Error) => this.logger.error(`lost ${job.id}: ${e.message}`));
    });
    this.queue.process(concurrency, (job: Job<ExecutionJob>) => handler(job.data)).catch((err: Error) => this.unlessStopping(err));
  }

  async backlog(): Promise<{ waiting: number; oldestAgeSeconds: number }> {
    const [waiting, [oldest]] = await Promise.all([this.queue.getWaitingCount(), this.queue.getJobs(['waiting'], 0, 0, true)]);
    return { waiting, oldestAgeSeconds: oldest ? (Date.now() - oldest.timestamp) / 1000 : 0 };
  }

  async ping(): Promise<void> {
    await this.queue.client.ping();
  }

  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    await withinGrace(this.queue.close(), graceMs);
  }

  /** A start cut short by a stop fails as expected; any other failure is the queue's error. */
  private unlessStopping(err: Error): void {
    if (!this.stopping) this.queue.emit('error', err);
  }
}
