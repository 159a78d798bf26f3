import type { ElicitRequest, ElicitResult, Progress } from '@modelcontextprotocol/client';
import { ToolError, type ToolContext } from '../tools/sdk';
import type { CallHandlers } from './upstream-client';

/** What an upstream sends during one call, handed to the execution: progress, and questions for its caller. */
export interface Passthrough extends CallHandlers {
  /** Why the call must fail although the upstream answered (a question our caller cannot be asked), if so. */
  readonly failure: ToolError | undefined;
  /** Each status of the upstream task the call runs as: its message is the execution's progress message. */
  onTaskStatus(task: { status: string; statusMessage?: string }): void;
}

/**
 * The execution's side of one upstream call. Upstream progress becomes the execution's
 * (`progress / total` as a percentage; without a total the message alone, at the last percentage).
 * An upstream task's status message becomes the execution's progress message (docs/upstreams.md#upstream-tasks).
 * An upstream elicitation becomes the execution's question `upstream-elicitation-<n>` (the n-th of
 * the call): the runner stops the execution at an unanswered question (docs/upstreams.md), the
 * caller answers, and the rerun calls the upstream again, answering its n-th elicitation from the
 * caller's answer. A caller that cannot be asked fails the call with that reason (the upstream is
 * answered with an error, not a decline made in the user's name).
 */
export function passthroughFor(ctx: ToolContext, upstream: string, timeoutMs: number): Passthrough {
  let percent = 0;
  let asked = 0;
  let failure: ToolError | undefined;
  return {
    timeoutMs,
    get failure() {
      return failure;
    },
    onProgress({ progress, total, message }: Progress) {
      if (typeof total === 'number' && total > 0) percent = Math.max(0, Math.min(100, Math.round((progress / total) * 100)));
      ctx.progress(percent, message);
    },
    onTaskStatus({ status, statusMessage }) {
      const message = status === 'input_required' ? `Upstream '${upstream}' waits for input${statusMessage ? `: ${statusMessage}` : ''}` : statusMessage;
      if (message) ctx.progress(percent, message.slice(0, 500));
    },
    async onElicit(request: ElicitRequest['params']): Promise<ElicitResult> {
      const key = `upstream-elicitation-${++asked}`;
      if (request.mode === 'url' || !('requestedSchema' in request)) {
        failure ??= new ToolError(`Upstream '${upstream}' asked for a URL elicitation, which is not passed to callers`, { details: { upstream } });
        throw failure;
      }
      if (!ctx.canAsk('elicitation/create')) {
        failure ??= new ToolError(`Upstream '${upstream}' asked its caller a question, and this caller cannot be asked`, {
          code: 'INVALID_INPUT',
          details: { upstream },
          suggestion: 'Call the tool over REST or MCP 2026-07-28, whose callers can answer',
        });
        throw failure;
      }
      try {
        const answer = await ctx.requestInput(key, { method: 'elicitation/create', params: { message: request.message, requestedSchema: request.requestedSchema as Record<string, unknown>, mode: 'form' } });
        return answer as ElicitResult;
      } catch (err) {
        if (err instanceof ToolError) failure ??= err;
        throw err;
      }
    },
  };
}
