import { AppException } from '../../../common/errors';
import type { TraceCarrier } from '../../../common/probes';

/** What a worker needs to run an execution; the input is whole here (secrets included), never in the database. */
import type { Sealed } from '../../../secrets/secret-cipher';

export interface ExecutionJob {
  executionId: string;
  toolId: string;
  input: Record<string, unknown>;
  timeoutSeconds: number;
  /** The submitting request's trace context, when tracing is on. */
  trace?: TraceCarrier;
  /** The call's secret inputs, sealed with SECRETS_KEY (then absent from `input`). */
  sealedInputs?: Sealed;
  /** Set on a run after answers to the tool's questions: how many answers it has (each run's differs). */
  answered?: number;
  /** Its caller cannot be asked (an MCP 2025-11-25 task): the tool is told it cannot. */
  unaskable?: true;
}

export type JobHandler = (job: ExecutionJob) => Promise<void>;
/** Called for a job whose worker vanished (killed, hung past its lock). */
export type LostJobHandler = (executionId: string) => Promise<void>;

/** Async executions waiting for a worker: in process (embedded) or on Bull + Redis (distributed). */
export abstract class ExecutionQueue {
  /** Accepts a job, or throws a retryable 503 at once when work cannot be accepted. */
  abstract enqueue(job: ExecutionJob): Promise<void>;

  /** Drops a job no worker has started; true when it was still waiting. */
  abstract remove(executionId: string): Promise<boolean>;

  /** Starts running jobs in this process, `concurrency` at a time (worker role only). */
  abstract consume(handler: JobHandler, onLost: LostJobHandler, concurrency: number): void;

  /**
   * Whether the execution's job is waiting or running. A job the queue holds as finished (failed)
   * is dropped here, so that the reconciler can add it again under its id.
   */
  abstract pending(job: Pick<ExecutionJob, 'executionId' | 'answered'>): Promise<boolean>;

  /**
   * Records that `workerId` is alive now; answers the workers that had not beaten for `staleMs`,
   * each answered to one caller only (so one process reports a dead worker, once).
   */
  abstract heartbeat(workerId: string, staleMs: number): Promise<string[]>;

  /** Jobs waiting for a worker, and how long the oldest has waited (metrics). */
  abstract backlog(): Promise<{ waiting: number; oldestAgeSeconds: number }>;

  /** Resolves when the queue's backend answers; rejects otherwise (readiness probe). */
  abstract ping(): Promise<void>;

  /** Stops taking jobs and waits up to `graceMs` for the running ones. */
  abstract stop(graceMs: number): Promise<void>;
}

/** A job's id in the queue: the execution's, or its own for a run after answers (the run before may not be removed yet). */
export function jobIdOf({ executionId, answered }: Pick<ExecutionJob, 'executionId' | 'answered'>): string {
  return answered ? `${executionId}:${answered}` : executionId;
}

export function queueUnavailable(reason: string): AppException {
  return new AppException('INTERNAL_ERROR', `The execution queue is unavailable (${reason}); retry shortly`, {
    status: 503,
    retryable: true,
    retry_after: 1,
  });
}

/** Resolves after `ms`, or with the promise if it settles first. */
export function withinGrace(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout;
  return Promise.race([promise.then(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() => clearTimeout(timer));
}
