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
export const CANCEL_TIMEOUT_MS = 5_000;

// The task shapes of both revisions, loosely: only what the mapping reads is checked, the rest
// (2026-07-28 tasks/get's `result`, `error` and `inputRequests`) passes.
export const TaskSchema = z.looseObject({
  taskId: z.string().min(1).max(512),
  status: z.enum(['working', 'input_required', 'completed', 'failed', 'cancelled']),
  statusMessage: z.string().optional(),
  pollInterval: z.number().optional(),
});
export const PayloadSchema = z.looseObject({ content: z.array(z.looseObject({ type: z.string() })).default([]), isError: z.boolean().optional() });
const CreatedSchema = z.looseObject({ task: TaskSchema });
export type UpstreamTask = z.infer<typeof TaskSchema>;

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

/** How one revision reads, answers and stops an upstream task once created. */
export interface TaskMethods {
  /** tasks/get. */
  get(taskId: string): Promise<UpstreamTask>;
  /** The result of a task that ended (or, without `answer`, of one waiting for input: 2025-11-25 tasks/result carries its questions). */
  result(task: UpstreamTask): Promise<CallToolResult>;
  /** Answers a task waiting for input, which then works on (2026-07-28 tasks/update). */
  answer?(task: UpstreamTask): Promise<void>;
  /** tasks/cancel, best effort: an upstream that cannot be told drops the task at its ttl. */
  cancel(taskId: string): Promise<void>;
}

/**
 * Follows a created upstream task to its result (docs/upstreams.md#upstream-tasks): tasks/get at
 * the upstream's pollInterval, each status reported, questions answered where the revision lets
 * them be (else its result is read at once, which carries them). Our following ending first (our
 * cancel, timeout, a question for our caller, any failure) sends tasks/cancel, so no upstream task
 * outlives it.
 */
export async function followTask(created: UpstreamTask, methods: TaskMethods, signal: AbortSignal, following: TaskFollowing): Promise<CallToolResult> {
  let task = created;
  try {
    await following.onCreated(task.taskId);
    following.onStatus(task);
    for (;;) {
      if (task.status === 'input_required' && methods.answer) await methods.answer(task);
      else if (task.status !== 'working') break;
      await sleep(Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, task.pollInterval ?? DEFAULT_POLL_MS)), signal);
      task = { ...(await followed(methods, task.taskId)), taskId: task.taskId };
      following.onStatus(task);
    }
    if (task.status === 'cancelled') {
      throw new ToolError(`The upstream cancelled its task ${task.taskId}${task.statusMessage ? `: ${task.statusMessage}` : ''}`, { details: { upstream_task_id: task.taskId } });
    }
    return await methods.result(task);
  } catch (err) {
    // Whatever ends our following (our cancel, timeout or question, a failure on our side, the upstream's), a task still running upstream is told to stop.
    if (task.status === 'working' || task.status === 'input_required') await methods.cancel(task.taskId);
    throw err;
  }
}

/** tasks/get; a JSON-RPC error answered to it means the upstream no longer has the task. */
async function followed(methods: TaskMethods, taskId: string): Promise<UpstreamTask> {
  try {
    return await methods.get(taskId);
  } catch (err) {
    if (!answeredWithError(err)) throw err;
    throw new ToolError(`The upstream no longer has its task ${taskId} (it expired or was lost): ${err.message}`, { details: { upstream_task_id: taskId, rpc_code: err.code } });
  }
}

/**
 * tools/call as a 2025-11-25 upstream task: created with `task.ttl`, followed on the session that
 * created it, its result read with tasks/result once it ends (a task waiting for input is read at
 * once: tasks/result carries its questions, which the elicitation handler answers as in any call).
 */
export async function callAsTask(client: Client, name: string, args: Record<string, unknown>, signal: AbortSignal, handlers: CallHandlers, following: TaskFollowing): Promise<CallToolResult> {
  const options = { signal, timeout: handlers.timeoutMs };
  const created = await client.request({ method: 'tools/call', params: { name, arguments: args, task: { ttl: following.ttlMs } } }, CreatedSchema, { ...options, onprogress: handlers.onProgress });
  const methods: TaskMethods = {
    get: (taskId) => client.request({ method: 'tasks/get', params: { taskId } }, TaskSchema, options),
    result: async (task) => (await client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, PayloadSchema, options)) as CallToolResult,
    cancel: async (taskId) => void (await client.request({ method: 'tasks/cancel', params: { taskId } }, z.looseObject({}), { timeout: CANCEL_TIMEOUT_MS, signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS) }).catch(() => undefined)),
  };
  try {
    return await followTask(created.task, methods, signal, following);
  } catch (err) {
    // The task lived in that session (SDK servers keep a task for its session): the call must not run again on a new one, which would start a second task.
    if (sessionUnknown(err)) throw new Error(`the upstream lost the session its task ${created.task.taskId} ran in (it restarted?): ${(err as Error).message}`, { cause: err });
    throw err;
  }
}
