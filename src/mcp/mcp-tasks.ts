import { Injectable } from '@nestjs/common';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppException } from '../common/errors';
import { EXECUTION_ID_PATTERN } from '../common/ids';
import { ExecutionEventBus } from '../executions/engine/events/execution-events';
import { TERMINAL_STATUSES, type Execution } from '../executions/engine/execution.entity';
import type { Asking } from '../executions/engine/execution-runner';
import { ExecutionsService } from '../executions/request/executions.service';
import { pendingInputRequests } from '../executions/request/execution-views';
import type { InputRequest } from '../tools/sdk';
import { InvocationService } from '../executions/request/invocation.service';
import type { Principal } from '../identity/principal';
import { ToolCatalogue, type RegisteredTool } from '../tools/tool-catalogue';
import { missingCapability, requireScope, toolCallResult } from './mcp-replies';

/** The MCP Tasks extension (SEP-2663), as a 2026-07-28 client declares it in a request's capabilities. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** What a client should wait between two tasks/get of a running task. */
const POLL_INTERVAL_MS = 500;
const DAY_MS = 86_400_000;
/** A wait for a task's end re-reads its row this often, in case a status event was lost (delivery is best effort). */
const REREAD_MS = 5_000;
/**
 * The longest a wait for a task's end holds its request: a little under the SDK clients' default
 * request timeout (60 s), so the client hears why rather than timing out.
 */
export const SETTLE_WAIT_MS = 55_000;

/**
 * Where a task stands, in no revision's words: 2026-07-28 calls a tool's error result `completed`
 * (the result has isError), 2025-11-25 calls it `failed`; `failed` here is a fault below the
 * tool's answer (the platform's, or a tool's crash).
 */
export type TaskStage = 'working' | 'input_required' | 'completed' | 'tool_error' | 'failed' | 'cancelled';

/** A task as every revision lists it. */
export interface TaskSummary {
  taskId: string;
  stage: TaskStage;
  /** The progress message while it works; how it ended once it did. */
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
}

/** A task as every revision reads it: with how it ended, or the questions it waits on. */
export interface TaskState extends TaskSummary {
  /** The CallToolResult a sync call would have had: `completed`, `tool_error` and `cancelled`. */
  result?: CallToolResult;
  /** `failed`: the JSON-RPC error a sync call would have had. */
  error?: { code: number; message: string };
  /** `input_required`: the questions still unanswered, by key. */
  inputRequests?: Record<string, InputRequest>;
}

/** The stages a task does not leave. */
export function hasEnded({ stage }: TaskSummary): boolean {
  return stage !== 'working' && stage !== 'input_required';
}

/** The refusal for a client without the extension, naming what it lacks. */
export function missingTasksExtension(): McpError {
  return missingCapability(`the ${TASKS_EXTENSION} extension`, { extensions: { [TASKS_EXTENSION]: {} } });
}

/** Which executions a revision calls tasks: any the key may see, or only async ones (those a task list shows). */
export type TaskScope = 'any' | 'async';

/**
 * MCP tasks are our executions, in both revisions that have them (the 2026-07-28 extension and
 * 2025-11-25): a task-supporting tool is submitted as an async execution (the same row, queue and
 * workers as REST async invoke), whose id is the task id. Reads go through the row as the key may
 * see it (its account, its tool allowlist); cancel is DELETE /v1/executions/{id}. So a task
 * survives the API process that accepted it and is visible, and cancellable, over REST as well.
 * This is the revision-neutral part; each endpoint renders a TaskState in its revision's shape.
 */
@Injectable()
export class McpTasks {
  constructor(
    private readonly invocations: InvocationService,
    private readonly executions: ExecutionsService,
    private readonly registry: ToolCatalogue,
    private readonly events: ExecutionEventBus,
  ) {}

  /**
   * Admits and queues the call; the row exists when this answers, so a read at once finds it.
   * `askable` false: its caller has no way to answer the tool's questions, which it is told.
   */
  /** `asking`: the caller can answer the task's questions (2026-07-28), and these are its answers to the up-front ones; without, it cannot be asked. */
  async start(principal: Principal, tool: RegisteredTool, input: Record<string, unknown>, requestId: string, asking?: Asking): Promise<TaskSummary> {
    const { execution } = await this.invocations.submit({ principal, tool, input, options: { async: true, cache: false }, requestId, ...(asking ? { asking } : { unaskable: true }) });
    return this.summaryOf(principal, execution);
  }

  /** The task of an async execution started elsewhere (a published workflow's run). */
  adopt(principal: Principal, execution: Execution): TaskSummary {
    return this.summaryOf(principal, execution);
  }

  async read(principal: Principal, taskId: string, scope: TaskScope): Promise<TaskState> {
    requireScope(principal, 'executions:read');
    return this.stateOf(principal, await this.row(principal, taskId, scope));
  }

  /** Newest first, after the task a cursor names; `async` executions only (see TaskScope). */
  async list(principal: Principal, cursor: string | undefined, size: number): Promise<{ tasks: TaskSummary[]; nextCursor?: string }> {
    requireScope(principal, 'executions:read');
    const { executions, next } = await this.executions.pageAfter(principal, { mode: 'async' }, cursor === undefined ? null : decodeCursor(cursor), size);
    return { tasks: executions.map((execution) => this.summaryOf(principal, execution)), ...(next && { nextCursor: encodeCursor(next) }) };
  }

  /** Cancels it if it is still active; either way answers the task as it now stands. */
  async cancel(principal: Principal, taskId: string, scope: TaskScope): Promise<TaskState> {
    requireScope(principal, 'executions:cancel');
    const execution = await this.row(principal, taskId, scope);
    try {
      return this.stateOf(principal, await this.executions.cancel(principal, execution.id));
    } catch (err) {
      if (!(err instanceof AppException && err.body.code === 'CONFLICT')) throw err;
      return this.read(principal, taskId, scope);
    }
  }

  /**
   * Answers a task's questions; once all are answered it runs again. Acknowledged whatever it
   * answers: responses to keys not outstanding are ignored, as the 2026-07-28 extension asks.
   */
  async answer(principal: Principal, taskId: string, responses: Record<string, unknown>): Promise<void> {
    requireScope(principal, 'tools:invoke');
    await this.known(async () => {
      try {
        await this.executions.answer(principal, taskId, responses);
      } catch (err) {
        const ignored = err instanceof AppException && (err.body.code === 'CONFLICT' || err.body.code === 'INVALID_REQUEST');
        if (!ignored) throw err;
      }
    });
  }

  /**
   * The task once it ended: woken by its status events (from whichever process runs it), re-read
   * every REREAD_MS in case one was lost, for SETTLE_WAIT_MS at most (then -32001, to ask again);
   * rejects when `signal` fires (the client went away).
   */
  async settled(principal: Principal, taskId: string, scope: TaskScope, signal: AbortSignal): Promise<TaskState> {
    requireScope(principal, 'executions:read');
    const deadline = Date.now() + SETTLE_WAIT_MS;
    let moved = false;
    let wake: () => void = () => void (moved = true);
    // Subscribed before the first read, so an end in between is not missed.
    const unsubscribe = this.events.subscribe(taskId, (event) => event.type === 'status' && wake());
    try {
      for (;;) {
        const execution = await this.row(principal, taskId, scope);
        if (TERMINAL_STATUSES.has(execution.status)) return this.stateOf(principal, execution);
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new McpError(ErrorCode.RequestTimeout, `Task ${taskId} is still ${execution.status} after ${SETTLE_WAIT_MS / 1000}s: call tasks/result again, or poll tasks/get`);
        }
        if (!moved) await nextOf(Math.min(REREAD_MS, left), signal, (done) => (wake = done));
        moved = false;
        wake = () => void (moved = true);
        if (signal.aborted) throw new McpError(ErrorCode.ConnectionClosed, 'The client went away');
      }
    } finally {
      unsubscribe();
    }
  }

  /** The row if it is a task the key may see; else "not found", as over REST (-32602, as both revisions ask). */
  private row(principal: Principal, taskId: string, scope: TaskScope): Promise<Execution> {
    return this.known(async () => {
      const execution = await this.executions.get(principal, taskId);
      if (scope === 'async' && execution.mode !== 'async') throw AppException.notFound('Execution', taskId);
      return execution;
    });
  }

  private async known<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (err) {
      if (err instanceof AppException && err.body.code === 'NOT_FOUND') throw new McpError(ErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
      throw err;
    }
  }

  private summaryOf(principal: Principal, execution: Execution): TaskSummary {
    const base = {
      taskId: execution.id,
      createdAt: execution.created_at.toISOString(),
      lastUpdatedAt: (execution.completed_at ?? execution.started_at ?? execution.created_at).toISOString(),
      // Executions are kept for the account tier's retention, then purged.
      ttlMs: principal.limits.retentionDays * DAY_MS,
      pollIntervalMs: POLL_INTERVAL_MS,
    };
    switch (execution.status) {
      case 'input_required':
        return { ...base, stage: 'input_required' };
      case 'queued':
      case 'running':
        return { ...base, stage: 'working', ...(execution.progress_message && { statusMessage: execution.progress_message }) };
      case 'cancelled':
        return { ...base, stage: 'cancelled', statusMessage: 'Cancelled' };
      case 'error':
        // A fault below the tool's own answer: the platform's (a lost worker, a shutdown) or a
        // tool's crash. An error the tool reported (a ToolError, a timeout) is an error result.
        return { ...base, stage: isFault(execution) ? 'failed' : 'tool_error', statusMessage: execution.error!.message };
      case 'success':
        return { ...base, stage: 'completed' };
    }
  }

  private stateOf(principal: Principal, execution: Execution): TaskState {
    const summary = this.summaryOf(principal, execution);
    // A workflow run (docs/workflows.md#publishing) is no registered tool: its result is its outputs, as they are.
    const tool = this.registry.has(execution.tool_id) ? this.registry.get(execution.tool_id) : WORKFLOW_RUN;
    switch (summary.stage) {
      case 'working':
        return summary;
      case 'input_required':
        return { ...summary, inputRequests: pendingInputRequests(execution) };
      case 'failed':
        return { ...summary, error: { code: ErrorCode.InternalError, message: execution.error!.message } };
      case 'completed':
        return { ...summary, result: toolCallResult(tool, execution, { status: 'success', execution_id: execution.id, result: execution.result }) };
      case 'tool_error':
        return { ...summary, result: toolCallResult(tool, execution, { status: 'error', execution_id: execution.id, error: execution.error }) };
      case 'cancelled':
        // As a sync call cancelled meanwhile (over REST) answers.
        return { ...summary, result: toolCallResult(tool, execution, { status: 'cancelled', execution_id: execution.id, error: { code: 'CONFLICT', message: 'Execution was cancelled', retryable: false } }) };
    }
  }
}

/** What the task replies read of a workflow run's "tool": no content member, so the result is its JSON. */
const WORKFLOW_RUN = { definition: {} } as Pick<RegisteredTool, 'definition'>;

function isFault(execution: Execution): boolean {
  return execution.error!.code === 'INTERNAL_ERROR' || execution.error!.details?.crashed === true;
}

/** Resolves after `ms`, when `signal` fires, or when the `arm`ed callback is called, whichever comes first. */
function nextOf(ms: number, signal: AbortSignal, arm: (done: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    if (signal.aborted) done();
    arm(done);
  });
}

/** Cursors are opaque to clients: the last task id of the page, base64url-encoded. */
function encodeCursor(id: string): string {
  return Buffer.from(id).toString('base64url');
}

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString();
  if (!EXECUTION_ID_PATTERN.test(id)) throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor: pass nextCursor from the previous tasks/list answer');
  return id;
}

/** A task as the 2026-07-28 extension's tasks/get shows it: its state, and the result or error once it ended. */
export interface DetailedTask {
  taskId: string;
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
  inputRequests?: Record<string, InputRequest>;
  [key: string]: unknown;
}

/** The answer to a tools/call that became a task (`resultType: 'task'`): the task, without result or error. */
export type CreateTaskResult = Omit<DetailedTask, 'result' | 'error' | 'inputRequests'> & { resultType: 'task' };

/** 2026-07-28: a tool's error result is a `completed` task whose result has isError; a cancelled task carries no result. */
export function extensionTask({ stage, result, error, inputRequests, ...task }: TaskState): DetailedTask {
  switch (stage) {
    case 'input_required':
      return { ...task, status: 'input_required', statusMessage: 'Waiting for answers to its questions (tasks/update)', inputRequests };
    case 'completed':
    case 'tool_error':
      // The `resultType` the SDK adds to CallToolResults (2026-07-28).
      return { ...task, status: 'completed', result: { resultType: 'complete', ...result } };
    case 'failed':
      return { ...task, status: 'failed', error };
    default:
      return { ...task, status: stage };
  }
}

export function extensionCreated(summary: TaskSummary): CreateTaskResult {
  const { result, error, inputRequests, ...task } = extensionTask(summary);
  return { resultType: 'task', ...task };
}
