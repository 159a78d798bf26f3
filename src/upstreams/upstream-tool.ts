import { createHash } from 'node:crypto';
import { fetch as undiciFetch } from 'undici';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { CallToolResult } from '@modelcontextprotocol/client';
import type { Client as StdioClient } from '@modelcontextprotocol/sdk/client/index.js';
import { upstreamCalls } from '../common/probes';
import { MAX_OUTPUT_DEPTH, unstorableProblem } from '../common/json-limits';
import { inputErrorToException } from '../tools/input-errors';
import { canonicalJson } from '../common/canonical-json';
import { findRefusal } from '../tools/sdk/network-errors';
import { ToolError, type ToolContext, type ToolInputProperty } from '../tools/sdk';
import type { RegisteredTool, ResolvedDefinition } from '../tools/tool-catalogue';
import type { AccountTool } from '../tools/account-tools';
import { callOperation } from './openapi-call';
import { callUpstreamTool } from './upstream-client';
import { answeredWithError } from './answered-error';
import { passthroughFor } from './upstream-passthrough';
import type { TaskFollowing } from './upstream-tasks';
import type { DiscoveredTool, Upstream } from './upstream.entity';

/** Calls per minute per key of one upstream tool: the default of built-in tools (docs/writing-a-tool.md). */
const UPSTREAM_RATE_LIMIT = 60;

/**
 * Upstream schemas are other people's: any draft's keywords may appear, so unknown ones are
 * annotations (strict off), as an MCP client would read them; inputs are checked, never rewritten.
 */
const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false, allowUnionTypes: true, coerceTypes: false, validateSchema: false }));

/** `<upstream>.<tool>`: the id REST and MCP know an upstream tool by. */
export function upstreamToolId(upstream: Pick<Upstream, 'name'>, toolName: string): string {
  return `${upstream.name}.${toolName}`;
}

/** The upstream's tools the account has on: the upstream enabled, the tool not switched off. */
export function enabledTools(upstream: Upstream): DiscoveredTool[] {
  if (!upstream.enabled) return [];
  const off = new Set(upstream.disabled_tools);
  return upstream.tools.filter((tool) => !off.has(tool.name));
}

/** Compiled upstream schemas by their JSON text, the least recently used dropped past MAX_VALIDATORS. */
const validators = new Map<string, ValidateFunction | null>();
const MAX_VALIDATORS = 2_000;

/**
 * The schema's validator (null when Ajv cannot compile it), compiled once per distinct schema:
 * each catalogue read builds tools from fresh row objects, and Ajv keys its own cache by object,
 * so compiling those directly cost milliseconds per call, grew Ajv's cache by one entry per call
 * and refused a second compile of a schema with an `$id`. Ajv's entry is removed after compiling.
 */
function compiled(schema: Record<string, unknown> | undefined): ValidateFunction | null {
  if (!schema) return null;
  const key = JSON.stringify(schema);
  let validator = validators.get(key);
  if (validator === undefined) {
    try {
      validator = ajv.compile(schema);
    } catch {
      validator = null;
    } finally {
      ajv.removeSchema(schema);
    }
    if (validators.size >= MAX_VALIDATORS) validators.delete(validators.keys().next().value!);
  } else {
    validators.delete(key);
  }
  validators.set(key, validator);
  return validator;
}

/** What an upstream's tools/call answered, as our result (or the ToolError our envelope shows). */
export function resultOf(upstream: Upstream, tool: DiscoveredTool, answer: CallToolResult): Record<string, unknown> {
  if (answer.isError) {
    const text = answer.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n').slice(0, 2_000);
    throw new ToolError(`Upstream '${upstream.name}' tool '${tool.name}' failed: ${text || 'no message'}`, { details: { upstream: upstream.name, tool: tool.name } });
  }
  if (tool.outputSchema) return (answer.structuredContent ?? {}) as Record<string, unknown>;
  return { content: answer.content, ...(answer.structuredContent !== undefined && { structured_content: answer.structuredContent }) };
}

/**
 * An upstream failing to answer as a ToolError: refused by the egress policy (the registration's
 * fault, not retryable), a JSON-RPC error it answered (not retryable), else unreachable, lost or
 * timed out (retryable).
 */
export function unreachable(upstream: Pick<Upstream, 'name'>, err: unknown): ToolError {
  if (err instanceof ToolError) return err;
  const details = { upstream: upstream.name };
  const refusal = findRefusal(err);
  if (refusal) {
    return new ToolError(`Upstream '${upstream.name}' is at a ${refusal.label} address (${refusal.address}), which the egress policy refuses`, {
      details,
      suggestion: 'Register the upstream at an address the service may reach, or ask the operator to add it to EGRESS_ALLOW',
    });
  }
  if (answeredWithError(err)) {
    return new ToolError(`Upstream '${upstream.name}' refused the call: ${err.message}`, { details: { ...details, rpc_code: err.code } });
  }
  const cause = (err as { cause?: { code?: string } })?.cause?.code;
  return new ToolError(`Upstream '${upstream.name}' could not be called: ${(err as Error).message}${cause ? ` (${cause})` : ''}`, { retryable: true, details });
}

/**
 * How a call ended, as the per-upstream metrics and the audit log name it (docs/upstreams.md#metrics):
 * `ok`; `refused` by the egress policy; `cancelled` (cancel, timeout, caller gone); else the error's
 * class — `invalid_input` (the upstream refused the input), `unavailable` (retryable: unreachable,
 * lost, 429/5xx) or `failed` (the upstream answered an error).
 */
export function callOutcome(upstream: Pick<Upstream, 'name'>, err: unknown, aborted: boolean): string {
  if (err === undefined) return 'ok';
  if (aborted) return 'cancelled';
  if (findRefusal(err)) return 'refused';
  const error = unreachable(upstream, err);
  return error.code === 'INVALID_INPUT' ? 'invalid_input' : error.retryable ? 'unavailable' : 'failed';
}

/** The egress policy's fetch, not bound to this execution's signal: the session it opens is kept for later calls. */
function unboundFetch(ctx: ToolContext): typeof fetch {
  const dispatcher = ctx.http.dispatcher;
  return ((input: Parameters<typeof fetch>[0], init: RequestInit = {}) => undiciFetch(input as never, { ...(init as object), dispatcher } as never)) as unknown as typeof fetch;
}

/** Sessions are kept per upstream, address and credential (its digest: the key holds no secret). */
function sessionKeyOf(upstream: Upstream, bearer: string | undefined): string {
  return `${upstream.id} ${upstream.url} ${bearer === undefined ? '-' : createHash('sha256').update(bearer).digest('base64url')}`;
}

/** What the service lends upstream calls: the supervised stdio processes, and the owning account's secrets for a shared upstream. */
export interface UpstreamCalls {
  stdio<T>(upstream: Upstream, signal: AbortSignal, work: (client: StdioClient) => Promise<T>): Promise<T>;
  ownerSecret(upstream: Upstream, name: string): Promise<string | undefined>;
  /** Whether the execution runs async (an async invoke, an MCP task, a workflow step): its call may then run as an upstream task. */
  runsAsync(executionId: string): Promise<boolean>;
  /** Keeps the upstream task the execution runs as with it (docs/upstreams.md#upstream-tasks). */
  rememberTask(executionId: string, upstream: Upstream, taskId: string): Promise<void>;
  /** Records the call in the audit log (docs/upstreams.md#audit-log); never throws. */
  called(upstream: Upstream, toolName: string, executionId: string, outcome: string): Promise<void>;
}

/**
 * One call: an OpenAPI operation's HTTP request, a tools/call to the supervised stdio process, or
 * an MCP tools/call on a kept session with the bearer token read at call time (a shared upstream's
 * from its owning account, never the caller's), progress and questions passed through.
 */
async function callOf(upstream: Upstream, tool: DiscoveredTool, input: Record<string, unknown>, ctx: ToolContext, calls: UpstreamCalls): Promise<Record<string, unknown>> {
  if (tool.operation) return callOperation({ upstream: upstream.name, baseUrl: upstream.url, auth: upstream.auth, timeoutMs: upstream.timeout_seconds * 1000 }, tool.operation, input, ctx);
  if (upstream.transport === 'stdio') {
    const answer = await calls.stdio(upstream, ctx.signal, async (client) => (await client.callTool({ name: tool.name, arguments: input }, undefined, { signal: ctx.signal, timeout: upstream.timeout_seconds * 1000 })) as CallToolResult);
    return resultOf(upstream, tool, answer);
  }
  const secretName = 'bearer_secret_name' in upstream.auth ? upstream.auth.bearer_secret_name : undefined;
  const bearer = secretName === undefined ? undefined : upstream.shared ? await calls.ownerSecret(upstream, secretName) : await ctx.secrets.get(secretName);
  const passthrough = passthroughFor(ctx, upstream.name, upstream.timeout_seconds * 1000);
  // A tool the upstream may run as a task runs as one when our call is itself long-lived (docs/upstreams.md#upstream-tasks).
  const asTask = tool.task_support === 'required' || (tool.task_support === 'optional' && (await calls.runsAsync(ctx.executionId)));
  const task: TaskFollowing | undefined = asTask
    ? { ttlMs: upstream.timeout_seconds * 1000, onCreated: (taskId) => calls.rememberTask(ctx.executionId, upstream, taskId), onStatus: (status) => passthrough.onTaskStatus(status) }
    : undefined;
  try {
    const answer = await callUpstreamTool({ url: upstream.url, bearer, fetch: unboundFetch(ctx), signal: ctx.signal, sessionKey: sessionKeyOf(upstream, bearer) }, tool.name, input, { ...passthrough, task });
    if (passthrough.failure) throw passthrough.failure;
    return resultOf(upstream, tool, answer);
  } catch (err) {
    throw passthrough.failure ?? err;
  }
}

/**
 * A tool's version: its schemas' and operation's digest, so a changed schema is a new version and
 * results cached under the old one are not served for it (docs/upstreams.md#caching).
 */
function schemaVersion(tool: DiscoveredTool): string {
  return createHash('sha256').update(canonicalJson({ input: tool.inputSchema, output: tool.outputSchema ?? null, operation: tool.operation ?? null })).digest('hex').slice(0, 12);
}

/**
 * One upstream tool as the runner runs it (src/executions/engine/execution-runner.ts): its input
 * checked against the upstream's inputSchema (an operation's: its parameters and body), the call made inside the execution with its signal
 * (cancel and timeout abort the request) and its egress-bound fetch, the bearer token read from
 * the account's secrets at call time, the structured result checked against the outputSchema.
 */
export function registeredUpstreamTool(upstream: Upstream, tool: DiscoveredTool, calls: UpstreamCalls): RegisteredTool {
  const id = upstreamToolId(upstream, tool.name);
  const description = tool.description ?? `Tool '${tool.name}' of the upstream '${upstream.name}'`;
  const readOnly = tool.annotations?.readOnlyHint === true;
  // Only what says it changes nothing is reused: a write's answer is about that write.
  const cached = readOnly && upstream.cache_ttl_seconds > 0;
  const definition: ResolvedDefinition = {
    id,
    name: tool.title ?? tool.name,
    category: 'integration',
    description,
    status: 'ready',
    version: schemaVersion(tool),
    input: { type: 'object', properties: {} },
    output: { type: 'object', properties: {} },
    rate_limit: UPSTREAM_RATE_LIMIT,
    timeout: upstream.timeout_seconds,
    cacheable: cached,
    cache_ttl: cached ? upstream.cache_ttl_seconds : 0,
    effects: readOnly ? 'read' : 'write',
    idempotent: tool.annotations?.idempotentHint === true,
    open_world: true,
    examples: [],
    config: {},
    isolated: false,
    // Any upstream call may run as our MCP task (an async execution); a task-capable upstream's then runs as its task (docs/upstreams.md#upstream-tasks).
    task_support: 'optional',
  } as ResolvedDefinition;
  const validateIn = compiled(tool.inputSchema);
  const validateOut = compiled(tool.outputSchema);
  const properties = ((tool.inputSchema.properties ?? {}) as Record<string, ToolInputProperty>);
  const summary = { id, name: definition.name, category: 'integration', description, status: 'ready', kind: 'upstream', upstream_id: upstream.id, upstream: upstream.name, timeout: `${upstream.timeout_seconds}s`, cacheable: cached, version: definition.version };
  return {
    definition,
    handler: {
      execute: async (input: Record<string, unknown>, ctx: ToolContext) => {
        const started = performance.now();
        let failure: unknown;
        try {
          return await callOf(upstream, tool, input, ctx, calls);
        } catch (err) {
          failure = err;
          throw ctx.signal.aborted ? err : unreachable(upstream, err);
        } finally {
          const outcome = callOutcome(upstream, failure, ctx.signal.aborted);
          if (upstreamCalls.hasSubscribers) upstreamCalls.publish({ upstreamId: upstream.id, outcome, seconds: (performance.now() - started) / 1000 });
          await calls.called(upstream, tool.name, ctx.executionId, outcome);
        }
      },
    },
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema ?? { type: 'object' },
    config: {},
    secretSettings: [],
    summary,
    compact: summary,
    detail: { ...summary, ...(tool.operation && { operation: `${tool.operation.method} ${tool.operation.path}` }), input_schema: tool.inputSchema, ...(tool.outputSchema && { output_schema: tool.outputSchema }), ...(tool.annotations && { annotations: tool.annotations }) },
    validateInput: (input) => {
      if (validateIn && !validateIn(input)) throw inputErrorToException(validateIn.errors ?? [], input, properties);
      return input;
    },
    outputProblem: (result) => {
      const unstorable = unstorableProblem(result, MAX_OUTPUT_DEPTH);
      if (unstorable) return `result cannot be stored: ${unstorable}`;
      return validateOut && !validateOut(result) ? ajv.errorsText(validateOut.errors, { dataVar: 'structuredContent' }) : null;
    },
  };
}

/** The tool among the account's own (GET /v1/tools, MCP tools/list), run as a built-in one is. */
export function accountToolOf(tool: RegisteredTool): AccountTool {
  return { id: tool.definition.id, name: tool.definition.name, description: tool.definition.description, summary: tool.summary, compact: tool.compact, detail: tool.detail, runnable: tool };
}
