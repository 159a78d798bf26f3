import { Injectable } from '@nestjs/common';
import {
  ErrorCode,
  McpError,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type CreateTaskResult,
  type ListTasksResult,
  type ServerCapabilities,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { AppConfig } from '../config/app-config';
import type { Principal } from '../identity/principal';
import { hasEnded, McpTasks, type TaskState, type TaskSummary } from './mcp-tasks';

/** MCP 2025-11-25: tasks/list, tasks/cancel, and task-augmented tools/call. */
export const LEGACY_TASKS_CAPABILITY: ServerCapabilities['tasks'] = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/**
 * A 2025-11-25 task: a tool's error result is `failed` (the revision says so of isError), and a
 * task waiting on questions says where they are answered, since this stateless endpoint cannot
 * send the client requests that would carry them (a task it started never asks: its tool is told
 * it cannot; one started over REST or 2026-07-28 may).
 */
export function legacyTask({ taskId, stage, statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs }: TaskSummary): Task {
  const status = stage === 'tool_error' ? 'failed' : stage;
  const message =
    stage === 'input_required' ? `Waiting for answers to its questions, which MCP 2025-11-25 cannot carry here: answer them with POST /v1/executions/${taskId}/input` : statusMessage;
  return { taskId, status, ...(message !== undefined && { statusMessage: message }), createdAt, lastUpdatedAt, ttl: ttlMs, pollInterval: pollIntervalMs };
}

export function legacyCreated(summary: TaskSummary): CreateTaskResult {
  return { task: legacyTask(summary) };
}

/**
 * The 2025-11-25 task methods over McpTasks: only async executions are tasks here (started as
 * tasks, or async over REST), so what tasks/get finds tasks/list shows, as the revision requires,
 * without listing every sync call.
 */
@Injectable()
export class McpLegacyTasks {
  constructor(
    private readonly tasks: McpTasks,
    private readonly config: AppConfig,
  ) {}

  async get(principal: Principal, taskId: string): Promise<Task> {
    return legacyTask(await this.tasks.read(principal, taskId, 'async'));
  }

  /** Waits for the end (see McpTasks.settled), then answers exactly what the call would have: its result with the related task, or its error. */
  async result(principal: Principal, taskId: string, signal: AbortSignal): Promise<CallToolResult> {
    const { result, error } = await this.tasks.settled(principal, taskId, 'async', signal);
    if (error) throw new McpError(error.code, error.message);
    return { ...result!, _meta: { ...result!._meta, [RELATED_TASK_META_KEY]: { taskId } } };
  }

  async list(principal: Principal, cursor: string | undefined): Promise<ListTasksResult> {
    const { tasks, nextCursor } = await this.tasks.list(principal, cursor, this.config.MCP_PAGE_SIZE);
    return { tasks: tasks.map(legacyTask), ...(nextCursor && { nextCursor }) };
  }

  /** A task that already ended, cancelled included, is refused (-32602), as the revision requires. */
  async cancel(principal: Principal, taskId: string): Promise<Task> {
    const before = await this.tasks.read(principal, taskId, 'async');
    if (hasEnded(before)) throw cannotCancel(before);
    const after = await this.tasks.cancel(principal, taskId, 'async');
    // It ended meanwhile, on its own.
    if (after.stage !== 'cancelled') throw cannotCancel(after);
    return legacyTask(after);
  }
}

function cannotCancel(task: TaskState): McpError {
  return new McpError(ErrorCode.InvalidParams, `Cannot cancel task: it already ended (status '${legacyTask(task).status}')`);
}
