import { until } from '../poll';
import type { FakeForge } from './server';

/** How long the forge holds the answer the call is cancelled during. */
const HELD_MS = 20_000;

/**
 * Starts `run` with a signal, holds the forge's answer to `operationId`, aborts once the request
 * has arrived, and returns what the call settled with, how long that took after the abort, and
 * whether the forge saw its client go away.
 */
export async function cancelDuring(forge: FakeForge, operationId: string, run: (signal: AbortSignal) => Promise<unknown>): Promise<{ error: unknown; settledMs: number; abandoned: boolean }> {
  forge.delay(HELD_MS, operationId);
  const before = forge.calls(operationId).length;
  const controller = new AbortController();
  const settled = run(controller.signal).then(
    () => ({ error: undefined }),
    (error: unknown) => ({ error }),
  );
  try {
    const request = await until(`${operationId} to reach the forge`, async () => forge.calls(operationId)[before]);
    const abortedAt = performance.now();
    controller.abort(new Error('cancelled by the caller'));
    const { error } = await settled;
    const settledMs = performance.now() - abortedAt;
    const abandoned = await until('the forge to see the client go', async () => (request.abandoned ? true : undefined), 5_000).catch(() => false);
    return { error, settledMs, abandoned };
  } finally {
    forge.delay(0, operationId);
  }
}
