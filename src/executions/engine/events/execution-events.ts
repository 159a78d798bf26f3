import type { Execution, ExecutionStatus } from '../execution.entity';

/** What happens to an execution; a `status` event of `cancelled` also tells its worker to abort it. */
export type ExecutionEvent =
  | {
      type: 'status';
      execution_id: string;
      status: ExecutionStatus;
      progress: number;
      /** The workflow run it belongs to (a step's run, or the run itself): the run's engine follows it (docs/workflows.md#how-a-run-advances). */
      run_id?: string;
    }
  | { type: 'progress'; execution_id: string; progress: number; message: string | null };

/** The `status` event of a row as it now stands. */
export function statusEvent(execution: Pick<Execution, 'id' | 'status' | 'progress' | 'kind' | 'parent_execution_id'>): ExecutionEvent {
  const runId = execution.kind === 'workflow' ? execution.id : execution.parent_execution_id;
  return { type: 'status', execution_id: execution.id, status: execution.status, progress: execution.progress, ...(runId && { run_id: runId }) };
}

export type ExecutionEventListener = (event: ExecutionEvent) => void;

/**
 * Execution events for live followers (SSE) and for cancel delivery: in memory in one process,
 * over Redis pub/sub across processes. Publishing never throws; delivery is best effort.
 */
export abstract class ExecutionEventBus {
  private readonly byExecution = new Map<string, Set<ExecutionEventListener>>();
  private readonly everything = new Set<ExecutionEventListener>();

  abstract publish(event: ExecutionEvent): void;

  /** Events of one execution; returns the unsubscribe function. */
  subscribe(executionId: string, listener: ExecutionEventListener): () => void {
    let listeners = this.byExecution.get(executionId);
    if (!listeners) this.byExecution.set(executionId, (listeners = new Set()));
    listeners.add(listener);
    return () => {
      listeners!.delete(listener);
      if (listeners!.size === 0) this.byExecution.delete(executionId);
    };
  }

  /** Every event (workers watch for cancellations). */
  subscribeAll(listener: ExecutionEventListener): () => void {
    this.everything.add(listener);
    return () => this.everything.delete(listener);
  }

  protected deliver(event: ExecutionEvent): void {
    for (const listener of this.everything) listener(event);
    const listeners = this.byExecution.get(event.execution_id);
    if (listeners) for (const listener of [...listeners]) listener(event);
  }
}

export class InMemoryEventBus extends ExecutionEventBus {
  publish(event: ExecutionEvent): void {
    // Asynchronous like the Redis bus, so publishers never run listeners inside their own stack.
    queueMicrotask(() => this.deliver(event));
  }
}
