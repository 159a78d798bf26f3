import { Injectable } from '@nestjs/common';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AppException } from '../common/errors';
import type { Execution } from '../executions/engine/execution.entity';
import { ExecutionsService } from '../executions/request/executions.service';
import { pendingInputRequests } from '../executions/request/execution-views';
import type { InputRequest } from '../tools/sdk';
import { InvocationService } from '../executions/request/invocation.service';
import type { Principal } from '../identity/principal';
import { ToolCatalogue, type RegisteredTool } from '../tools/tool-registry';
import { missingCapability, requireScope, toolCallResult } from './mcp-replies';

/** The MCP Tasks extension (SEP-2663), as a 2026-07-28 client declares it in a request's capabilities. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** What a client should wait between two tasks/get of a running task. */
const POLL_INTERVAL_MS = 500;
const DAY_MS = 86_400_000;

type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** A task as tasks/get shows it: its state, and the result or error once it ended. */
export interface DetailedTask {
  taskId: string;
  status: TaskStatus;
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

/** The refusal for a client without the extension, naming what it lacks. */
export function missingTasksExtension(): McpError {
  return missingCapability(`the ${TASKS_EXTENSION} extension`, { extensions: { [TASKS_EXTENSION]: {} } });
}

/**
 * MCP tasks are our executions: a task-supporting tool called by a client that declared the
 * extension is submitted as an async execution (the same row, queue and workers as REST async
 * invoke), whose id is the task id. tasks/get reads the row as the key may see it (its account,
 * its tool allowlist) and inlines the result once it ended; tasks/cancel is DELETE
 * /v1/executions/{id}. So a task survives the API process that accepted it and is visible, and
 * cancellable, over REST as well.
 */
@Injectable()
export class McpTasks {
  constructor(
    private readonly invocations: InvocationService,
    private readonly executions: ExecutionsService,
    private readonly registry: ToolCatalogue,
  ) {}

  /** Admits and queues the call; the row exists when this answers, so a tasks/get at once finds it. */
  async start(principal: Principal, tool: RegisteredTool, input: Record<string, unknown>, requestId: string): Promise<CreateTaskResult> {
    const { execution } = await this.invocations.submit({ principal, tool, input, options: { async: true, cache: false }, requestId });
    const { result, error, ...task } = this.taskOf(principal, execution);
    return { resultType: 'task', ...task };
  }

  async get(principal: Principal, taskId: string): Promise<DetailedTask> {
    requireScope(principal, 'executions:read');
    return this.taskOf(principal, await this.known(() => this.executions.get(principal, taskId)));
  }

  /** Idempotent: a task that already ended is acknowledged as well (its status says how it ended). */
  async cancel(principal: Principal, taskId: string): Promise<Record<string, never>> {
    requireScope(principal, 'executions:cancel');
    await this.known(async () => {
      try {
        await this.executions.cancel(principal, taskId);
      } catch (err) {
        if (!(err instanceof AppException && err.body.code === 'CONFLICT')) throw err;
      }
    });
    return {};
  }

  /**
   * Answers a task's questions (tasks/update); once all are answered it runs again. Acknowledged
   * whatever it answers: responses to keys not outstanding are ignored, as the extension asks.
   */
  async update(principal: Principal, taskId: string, responses: Record<string, unknown>): Promise<Record<string, never>> {
    requireScope(principal, 'tools:invoke');
    await this.known(async () => {
      try {
        await this.executions.answer(principal, taskId, responses);
      } catch (err) {
        const ignored = err instanceof AppException && (err.body.code === 'CONFLICT' || err.body.code === 'INVALID_REQUEST');
        if (!ignored) throw err;
      }
    });
    return {};
  }

  /** An id the key may not see is unknown, as over REST: -32602, as the extension asks. */
  private async known<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (err) {
      if (err instanceof AppException && err.body.code === 'NOT_FOUND') throw new McpError(ErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
      throw err;
    }
  }

  private taskOf(principal: Principal, execution: Execution): DetailedTask {
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
        return { ...base, status: 'input_required', statusMessage: 'Waiting for answers to its questions (tasks/update)', inputRequests: pendingInputRequests(execution) };
      case 'queued':
      case 'running':
        return { ...base, status: 'working', ...(execution.progress_message && { statusMessage: execution.progress_message }) };
      case 'cancelled':
        return { ...base, status: 'cancelled', statusMessage: 'Cancelled' };
      case 'error':
        // The extension keeps `failed` for faults below the tool's own answer: the platform's (a lost
        // worker, a shutdown) and a tool's crash. An error the tool reported (a ToolError, a timeout)
        // is a completed call with isError, as a sync call answers it.
        if (execution.error!.code === 'INTERNAL_ERROR' || execution.error!.details?.crashed === true) {
          return { ...base, status: 'failed', statusMessage: execution.error!.message, error: { code: ErrorCode.InternalError, message: execution.error!.message } };
        }
        return { ...base, status: 'completed', statusMessage: execution.error!.message, result: this.resultOf(execution, { status: 'error', execution_id: execution.id, error: execution.error }) };
      case 'success':
        return { ...base, status: 'completed', result: this.resultOf(execution, { status: 'success', execution_id: execution.id, result: execution.result }) };
    }
  }

  /** The CallToolResult a sync call would have had, with the `resultType` the SDK adds to those (2026-07-28). */
  private resultOf(execution: Execution, answer: Record<string, unknown>): Record<string, unknown> {
    return { resultType: 'complete', ...toolCallResult(this.registry.get(execution.tool_id), execution, answer) };
  }
}
