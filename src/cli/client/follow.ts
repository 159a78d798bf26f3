/** Live progress of one execution from its SSE stream: a bar on a TTY, plain lines otherwise. */
import { ApiClient, ClientError, EXIT } from './api-client';

interface ExecutionView {
  status?: string;
  progress?: number | null;
  message?: string | null;
  error?: { code?: string; message?: string; suggestion?: string } | null;
}

/** Progress is a percentage (0..100) on every event of the stream. */
function progressPercent(progress: unknown): number | null {
  return typeof progress === 'number' ? Math.round(progress) : null;
}

function render(status: string, progress: unknown, message: string | null | undefined, tty: boolean): string {
  const percent = progressPercent(progress);
  const note = message ? ` ${message}` : '';
  if (!tty) return `${status}${percent === null ? '' : ` ${percent}%`}${note}\n`;
  const width = 30;
  const filled = Math.round(((percent ?? 0) / 100) * width);
  return `\r[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(percent ?? 0).padStart(3)}% ${status}${note}\x1b[K`;
}

/** Follows until the final `result` event; returns it, or throws on timeout. */
export async function followExecution(client: ApiClient, executionId: string, timeoutSeconds: number | undefined, out: NodeJS.WriteStream = process.stderr): Promise<ExecutionView> {
  const tty = Boolean(out.isTTY);
  const controller = new AbortController();
  const timer = timeoutSeconds ? setTimeout(() => controller.abort(), timeoutSeconds * 1000) : undefined;
  let final: ExecutionView | undefined;
  // Progress events carry no status; they belong to the last status seen.
  let status = 'queued';
  try {
    await client.events(
      executionId,
      (event, data) => {
        const view = data as ExecutionView;
        if (event === 'result') final = view;
        if (event !== 'status' && event !== 'progress') return;
        status = view.status ?? status;
        out.write(render(status, view.progress, view.message, tty));
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

/** Exit code for an execution: 0 unless it ended in error (3), cancelled (4) or timed out (5). */
export function exitCodeFor(view: ExecutionView): number {
  if (view.status === 'cancelled') return EXIT.cancelled;
  if (view.status !== 'error') return EXIT.ok;
  return view.error?.code === 'TOOL_TIMEOUT' ? EXIT.timeout : EXIT.executionFailed;
}
