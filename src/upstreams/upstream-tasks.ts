import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { sleep } from '../tools/sdk/sleep';
import { ToolError } from '../tools/sdk';
import { answeredWithError } from './answered-error';
import type { CallHandlers } from './upstream-client';
import { sessionUnknown } from './upstream-sessions';

/** The upstream's poll interval is honoured within these bounds (ms): a zero does not spin, a day does not stall. */
const MIN_POLL_MS = 100;
/** The poll interval of an upstream that gives none (ms). */
const DEFAULT_POLL_MS = 1_000;
const MAX_POLL_MS = 5_000;
/** How long tasks/cancel may take once our execution ended (its own signal has fired by then). */
const CANCEL_TIMEOUT_MS = 5_000;

// The 2025-11-25 task shapes, loosely: only what the mapping reads is checked, the rest passes.
const TaskSchema = z.looseObject({
  taskId: z.string().min(1).max(512),
  status: z.enum(['working', 'input_required', 'completed', 'failed', 'cancelled']),
  statusMessage: z.string().optional(),
  pollInterval: z.number().optional(),
});
const PayloadSchema = z.looseObject({ content: z.array(z.looseObject({ type: z.string() })).default([]), isError: z.boolean().optional() });
const CreatedSchema = z.looseObject({ task: TaskSchema });
type UpstreamTask = z.infer<typeof TaskSchema>;

/** Whether a connected upstream runs tools/call as a task (the 2025-11-25 `tasks.requests.tools.call` capability). */
export function runsToolCallsAsTasks(client: Pick<Client, 'getServerCapabilities'>): boolean {
  const tasks = (client.getServerCapabilities() as { tasks?: { requests?: { tools?: { call?: unknown } } } } | undefined)?.tasks;
  return tasks?.requests?.tools?.call !== undefined;
}

/** What a call made as a task does besides what any call does. */
export interface TaskFollowing {
  /** How long the upstream should keep the task (its ttl): our execution's timeout, so one we lose is dropped upstream. */
  ttlMs: number;
  /** The upstream task was created: its id, to keep with the execution. */
  onCreated(taskId: string): Promise<void>;
  /** Each status the upstream reports (its status message, if any, is the execution's progress message). */
  onStatus(task: { status: string; statusMessage?: string }): void;
}

/**
 * tools/call as an upstream task (docs/upstreams.md#upstream-tasks): created with `task.ttl`,
 * followed with tasks/get at the upstream's pollInterval, its result read with tasks/result once
 * it ends (a task waiting for input is read at once: tasks/result carries its questions, which the
 * elicitation handler answers as in any call). Our following ending first (our cancel, timeout,
 * a question for our caller, any failure) sends tasks/cancel, so no upstream task outlives it.
 */
export async function callAsTask(client: Client, name: string, args: Record<string, unknown>, signal: AbortSignal, handlers: CallHandlers, following: TaskFollowing): Promise<CallToolResult> {
  const options = { signal, timeout: handlers.timeoutMs };
  const created = await client.request({ method: 'tools/call', params: { name, arguments: args, task: { ttl: following.ttlMs } } }, CreatedSchema, { ...options, onprogress: handlers.onProgress });
  let task: UpstreamTask = created.task;
  try {
    await following.onCreated(task.taskId);
    following.onStatus(task);
    while (task.status === 'working') {
      await sleep(Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, task.pollInterval ?? DEFAULT_POLL_MS)), signal);
      task = { ...(await followed(client, task.taskId, options)), taskId: task.taskId };
      following.onStatus(task);
    }
    if (task.status === 'cancelled') {
      throw new ToolError(`The upstream cancelled its task ${task.taskId}${task.statusMessage ? `: ${task.statusMessage}` : ''}`, { details: { upstream_task_id: task.taskId } });
    }
    return (await client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, PayloadSchema, options)) as CallToolResult;
  } catch (err) {
    // Whatever ends our following (our cancel, timeout or question, a failure on our side, the upstream's), a task still running upstream is told to stop.
    if (task.status === 'working' || task.status === 'input_required') await cancelTask(client, task.taskId);
    // The task lived in that session (SDK servers keep a task for its session): the call must not run again on a new one, which would start a second task.
    if (sessionUnknown(err)) throw new Error(`the upstream lost the session its task ${task.taskId} ran in (it restarted?): ${(err as Error).message}`, { cause: err });
    throw err;
  }
}

/** tasks/get; a JSON-RPC error answered to it means the upstream no longer has the task. */
async function followed(client: Client, taskId: string, options: { signal: AbortSignal; timeout: number }): Promise<UpstreamTask> {
  try {
    return await client.request({ method: 'tasks/get', params: { taskId } }, TaskSchema, options);
  } catch (err) {
    if (!answeredWithError(err)) throw err;
    throw new ToolError(`The upstream no longer has its task ${taskId} (it expired or was lost): ${err.message}`, { details: { upstream_task_id: taskId, rpc_code: err.code } });
  }
}

/** tasks/cancel, best effort: an upstream that cannot be told drops the task at its ttl. */
async function cancelTask(client: Client, taskId: string): Promise<void> {
  await client.request({ method: 'tasks/cancel', params: { taskId } }, z.looseObject({}), { timeout: CANCEL_TIMEOUT_MS, signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS) }).catch(() => undefined);
}
