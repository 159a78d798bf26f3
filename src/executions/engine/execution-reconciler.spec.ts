import type { AppConfig } from '../../config/app-config';
import type { Execution } from './execution.entity';
import { ExecutionReconciler } from './execution-reconciler';
import type { ExecutionRunner } from './execution-runner';
import type { ExecutionsStore } from './executions.store';
import type { ExecutionQueue } from './queue/execution-queue';

describe('ExecutionReconciler.pass', () => {
  /** Three queued rows read by the pass: `held` still has its job, `taken` was finished by a worker since the read, `lost` has no job. */
  function world() {
    const rows = ['held', 'taken', 'lost'].map((id) => ({ id, tool_id: 'json-transform', input: {} }) as unknown as Execution);
    const requeued: string[] = [];
    const store = {
      queuedBefore: async () => rows,
      stillQueued: async (ids: string[]) => new Set(ids.filter((id) => id !== 'taken')),
      oldestQueuedAgeSeconds: async () => 0,
    } as unknown as ExecutionsStore;
    const queue = { heartbeat: async () => [], pending: async ({ executionId }: { executionId: string }) => executionId === 'held' } as unknown as ExecutionQueue;
    const runner = {
      jobOf: (execution: Execution) => ({ executionId: execution.id }),
      requeue: async (execution: Execution) => (requeued.push(execution.id), true),
    } as unknown as ExecutionRunner;
    const config = { RECONCILE_INTERVAL_SECONDS: 5, RECONCILE_MIN_AGE_SECONDS: 5, RECONCILE_BATCH: 500 } as AppConfig;
    return { reconciler: new ExecutionReconciler(config, store, queue, runner), requeued };
  }

  it('queues again only a row still queued after its job was found missing', async () => {
    const { reconciler, requeued } = world();
    await expect(reconciler.pass()).resolves.toBe(1);
    expect(requeued).toEqual(['lost']);
  });
});
