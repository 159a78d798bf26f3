/** Live progress of one execution from its SSE stream: a bar on a TTY, plain lines otherwise. */
import { ApiClient, ClientError, EXIT } from './api-client';

interface ExecutionView {
  execution_id?: string;
  status?: string;
  progress?: number | null;
  error?: { code?: string; message?: string; suggestion?: string } | null;
}

function progressPercent(progress: unknown): number | null {
  if (typeof progress === 'number') return progress <= 1 ? Math.round(progress * 100) : Math.round(progress);
  const value = (progress as { percent?: number; value?: number } | null)?.percent;
  return typeof value === 'number' ? Math.round(value) : null;
}

function render(status: string, progress: unknown, tty: boolean): string {
  const percent = progressPercent(progress);
  if (!tty) return `${status}${percent === null ? '' : ` ${percent}%`}\n`;
  const width = 30;
  const filled = Math.round(((percent ?? 0) / 100) * width);
  return `\r[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(percent ?? 0).padStart(3)}% ${status}\x1b[K`;
}

/** Follows until the final `result` event; returns it, or throws on timeout. */
export async function followExecution(client: ApiClient, executionId: string, timeoutSeconds: number | undefined, out: NodeJS.WriteStream = process.stderr): Promise<ExecutionView> {
  const tty = Boolean(out.isTTY);
  const controller = new AbortController();
  const timer = timeoutSeconds ? setTimeout(() => controller.abort(), timeoutSeconds * 1000) : undefined;
  let final: ExecutionView | undefined;
  try {
    await client.events(
      executionId,
      (event, data) => {
        const view = data as ExecutionView;
        if (event === 'result') final = view;
        else if (event === 'status' || event === 'progress') out.write(render(view.status ?? event, view.progress, tty));
      },
      controller.signal,
    );
  } catch (err) {
    if (controller.signal.aborted) throw new ClientError('TIMEOUT', `gave up following ${executionId} after ${timeoutSeconds}s`, 'the execution still runs; follow it again or cancel it', EXIT.timeout);
    throw err;
  } finally {
    clearTimeout(timer);
    if (tty) out.write('\n');
  }
  if (!final) throw new ClientError('STREAM_ENDED', `the event stream of ${executionId} ended without a result`, 'run tos executions show', EXIT.error);
  return final;
}

/** Exit code for a finished execution. */
export function exitCodeFor(view: ExecutionView): number {
  if (view.status === 'success') return EXIT.ok;
  if (view.status === 'cancelled') return EXIT.cancelled;
  if (view.error?.code === 'TIMEOUT' || view.error?.code === 'EXECUTION_TIMEOUT') return EXIT.timeout;
  return EXIT.executionFailed;
}
