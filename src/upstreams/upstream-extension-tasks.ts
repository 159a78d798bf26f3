import type { CallToolResult, Client, ElicitRequest } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { findRefusal } from '../tools/sdk/network-errors';
import { ToolError } from '../tools/sdk';
import { answeredWithError } from './answered-error';
import type { CallHandlers } from './upstream-client';
import { CANCEL_TIMEOUT_MS, followTask, PayloadSchema, TaskSchema, type TaskFollowing, type TaskMethods, type UpstreamTask } from './upstream-tasks';

/** The Tasks extension of MCP 2026-07-28 (SEP-2663), as a server declares it and a client opts in to it. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const MODERN_REVISION = '2026-07-28';
/** Rounds of questions one tools/call may ask before it answers (each round is our caller's questions). */
const MAX_INPUT_ROUNDS = 8;

/** Whether a connected upstream speaks 2026-07-28 and declares the Tasks extension (in server/discover). */
export function servesTasksExtension(client: Pick<Client, 'getServerCapabilities' | 'transport'>): boolean {
  const extensions = (client.getServerCapabilities() as { extensions?: Record<string, unknown> } | undefined)?.extensions;
  return (client.transport as { protocolVersion?: string } | undefined)?.protocolVersion === MODERN_REVISION && extensions?.[TASKS_EXTENSION] !== undefined;
}

/** How the upstream is reached with a plain POST: the SDK v2 client cannot make the call that opens a task (below). */
export interface ExtensionRoute {
  url: string;
  bearer?: string;
  /** The egress policy's. */
  fetch: typeof fetch;
  clientInfo: { name: string; version: string };
  /** Our client capabilities, to which the extension is added on the requests that opt in. */
  capabilities: Record<string, unknown>;
}

/** A 2026-07-28 task, its poll interval (`pollIntervalMs` there) where the follow loop reads it. */
const ExtensionTaskSchema = TaskSchema.extend({ pollIntervalMs: z.number().optional() }).transform(({ pollIntervalMs, ...task }): UpstreamTask => ({ ...task, ...(pollIntervalMs !== undefined && { pollInterval: pollIntervalMs }) }));
const AnswerSchema = z.looseObject({ resultType: z.string().optional(), inputRequests: z.record(z.string(), z.unknown()).optional(), requestState: z.string().optional() });
const InputRequestSchema = z.looseObject({ method: z.string(), params: z.looseObject({}).optional() });
const RpcAnswerSchema = z.looseObject({ id: z.unknown(), result: z.unknown().optional(), error: z.looseObject({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional() });

/**
 * tools/call opting in to the upstream's Tasks extension (docs/upstreams.md#upstream-tasks). The
 * SDK v2 client refuses a result of `resultType: 'task'`, so the call is a plain JSON-RPC POST
 * with the 2026-07-28 envelope, through the same egress-bound fetch; the upstream decides: a task
 * is followed with tasks/get (the SDK client sends the extension's tasks/get, tasks/update and
 * tasks/cancel when given a result schema) to the result it carries, its questions answered with
 * tasks/update; a complete result is the call's; questions asked before it answers are answered
 * and the call sent again with them, as 2026-07-28 has it.
 */
export async function callAsExtensionTask(client: Client, route: ExtensionRoute, name: string, args: Record<string, unknown>, signal: AbortSignal, handlers: CallHandlers, following: TaskFollowing): Promise<CallToolResult> {
  const capabilities = { ...route.capabilities, extensions: { ...(route.capabilities.extensions as object), [TASKS_EXTENSION]: {} } };
  let retry: { inputResponses: Record<string, unknown>; requestState?: string } | undefined;
  for (let round = 0; round <= MAX_INPUT_ROUNDS; round++) {
    const answer = await opened(route, capabilities, { name, arguments: args, ...retry }, signal, handlers.timeoutMs);
    if (answer.resultType === 'task') return followExtensionTask(client, capabilities, parsedTask(answer), signal, handlers, following);
    if (answer.resultType !== 'input_required') return parsedResult(answer);
    // Each round's questions are answered whole: one asked again is asked again of our caller.
    retry = { inputResponses: await answersTo(answer.inputRequests ?? {}, handlers), ...(answer.requestState !== undefined && { requestState: answer.requestState }) };
  }
  throw new ToolError(`The upstream asked more than ${MAX_INPUT_ROUNDS} rounds of questions before answering tools/call`);
}

/** The task followed to its end; a failure that leaves it possibly running upstream says so, and is not retried (a retry would start a second task). */
async function followExtensionTask(client: Client, capabilities: Record<string, unknown>, created: UpstreamTask, signal: AbortSignal, handlers: CallHandlers, following: TaskFollowing): Promise<CallToolResult> {
  // A task may still show questions it was sent answers to (until it takes them): each is asked of our caller once.
  const asked = new Set<string>();
  const meta = { _meta: { 'io.modelcontextprotocol/clientCapabilities': capabilities } };
  const options = { signal, timeout: handlers.timeoutMs };
  let stopped = false;
  const methods: TaskMethods = {
    get: (taskId) => client.request({ method: 'tasks/get', params: { taskId, ...meta } }, ExtensionTaskSchema, options),
    answer: async (task) => {
      const inputResponses = await answersTo((task.inputRequests ?? {}) as Record<string, unknown>, handlers, asked);
      if (Object.keys(inputResponses).length > 0) await client.request({ method: 'tasks/update', params: { taskId: task.taskId, inputResponses, ...meta } }, z.looseObject({}), options);
    },
    result: async (task) => {
      if (task.status === 'failed') {
        const error = (task.error ?? {}) as { code?: unknown; message?: unknown };
        throw new ToolError(`The upstream task ${task.taskId} failed: ${typeof error.message === 'string' ? error.message : 'no message'}`, { details: { upstream_task_id: task.taskId, ...(typeof error.code === 'number' && { rpc_code: error.code }) } });
      }
      const result = PayloadSchema.safeParse(task.result);
      if (!result.success) throw new ToolError(`The upstream task ${task.taskId} completed without a tool result`, { details: { upstream_task_id: task.taskId } });
      return toolResult(result.data);
    },
    cancel: async (taskId) => {
      const cancelled = AbortSignal.timeout(CANCEL_TIMEOUT_MS);
      stopped = await client.request({ method: 'tasks/cancel', params: { taskId, ...meta } }, z.looseObject({}), { timeout: CANCEL_TIMEOUT_MS, signal: cancelled }).then(() => true, (err: unknown) => answeredWithError(err));
    },
  };
  try {
    return await followTask(created, methods, signal, following);
  } catch (err) {
    const transient = !(err instanceof ToolError) && !answeredWithError(err) && !signal.aborted;
    if (!transient || stopped) throw err;
    throw new ToolError(`Lost contact with the upstream task ${created.taskId}, which may still be running there: ${(err as Error).message}`, { details: { upstream_task_id: created.taskId } });
  }
}

/** Our caller's answers to the questions not yet answered; only elicitations are passed to callers (docs/upstreams.md). */
async function answersTo(requests: Record<string, unknown>, handlers: CallHandlers, asked = new Set<string>()): Promise<Record<string, unknown>> {
  const responses: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(requests)) {
    if (asked.has(key)) continue;
    const request = InputRequestSchema.safeParse(raw);
    if (!request.success || request.data.method !== 'elicitation/create') {
      throw new ToolError(`The upstream asked its caller ${request.success ? `'${request.data.method}'` : 'a malformed question'}, which is not passed to callers`);
    }
    responses[key] = await handlers.onElicit(request.data.params as ElicitRequest['params']);
    asked.add(key);
  }
  return responses;
}

function parsedTask(answer: Record<string, unknown>): UpstreamTask {
  const task = ExtensionTaskSchema.safeParse(answer);
  if (!task.success) throw new ToolError(`The upstream answered tools/call with a malformed task: ${task.error.message}`);
  return task.data;
}

function parsedResult(answer: z.infer<typeof AnswerSchema>): CallToolResult {
  if (answer.resultType !== undefined && answer.resultType !== 'complete') throw new ToolError(`The upstream answered tools/call with a result of type '${answer.resultType}', which is not known here`);
  const result = PayloadSchema.safeParse(answer);
  if (!result.success) throw new ToolError(`The upstream answered tools/call with a malformed result: ${result.error.message}`);
  return toolResult(result.data);
}

/** The CallToolResult without the 2026-07-28 `resultType`, as the SDK client hands results on. */
function toolResult({ resultType: _complete, ...result }: Record<string, unknown>): CallToolResult {
  return result as CallToolResult;
}

/**
 * tools/call as a plain POST. The upstream may have started a task once the request left: a loss
 * after that is not retryable (a retry could start a second task); one before (refused, no
 * connection) is, as any unreachable upstream's.
 */
async function opened(route: ExtensionRoute, capabilities: Record<string, unknown>, params: Record<string, unknown>, signal: AbortSignal, timeoutMs: number): Promise<z.infer<typeof AnswerSchema>> {
  try {
    const result = AnswerSchema.safeParse(await posted(route, { method: 'tools/call', params }, capabilities, AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])));
    if (!result.success) throw new ToolError(`The upstream answered tools/call with a malformed result: ${result.error.message}`);
    return result.data;
  } catch (err) {
    if (err instanceof ToolError || answeredWithError(err) || signal.aborted || findRefusal(err) || notSent(err)) throw err;
    throw new ToolError(`Upstream tools/call was lost after it was sent (the upstream may have started a task): ${(err as Error).message}`);
  }
}

/** A connection that failed before the request could leave. */
function notSent(err: unknown): boolean {
  const code = (err as { cause?: { code?: string } })?.cause?.code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'UND_ERR_CONNECT_TIMEOUT';
}

let nextId = 0;

/** One 2026-07-28 request: routing headers, the `_meta` envelope; the answer read from JSON or an event stream. */
async function posted(route: ExtensionRoute, request: { method: string; params: Record<string, unknown> }, capabilities: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>> {
  const id = `tos-${++nextId}`;
  const envelope = {
    'io.modelcontextprotocol/protocolVersion': MODERN_REVISION,
    'io.modelcontextprotocol/clientInfo': route.clientInfo,
    'io.modelcontextprotocol/clientCapabilities': capabilities,
  };
  const name = request.params.name;
  const response = await route.fetch(route.url, {
    method: 'POST',
    signal,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_REVISION,
      'mcp-method': request.method,
      ...(typeof name === 'string' && { 'mcp-name': name }),
      ...(route.bearer && { authorization: `Bearer ${route.bearer}` }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: request.method, params: { ...request.params, _meta: envelope } }),
  });
  const text = await response.text();
  const messages = (response.headers.get('content-type') ?? '').includes('text/event-stream') ? eventData(text) : [text];
  for (const data of messages) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      continue;
    }
    const answer = RpcAnswerSchema.safeParse(parsed);
    if (!answer.success || answer.data.id !== id) continue;
    if (answer.data.error) {
      const { ProtocolError } = await import('@modelcontextprotocol/client');
      throw ProtocolError.fromError(answer.data.error.code, answer.data.error.message, answer.data.error.data);
    }
    if (answer.data.result && typeof answer.data.result === 'object') return answer.data.result as Record<string, unknown>;
  }
  // It answered without starting anything: worth a retry when it is overloaded or failing.
  throw new ToolError(`The upstream answered HTTP ${response.status} without a JSON-RPC response to ${request.method}`, { retryable: response.status === 429 || response.status >= 500 });
}

/** The data of each event of an event stream, its `data:` lines joined. */
function eventData(stream: string): string[] {
  return stream.split(/\r?\n\r?\n/).map((event) =>
    event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n'),
  );
}
