import { Injectable, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { ErrorCode, McpError, type CallToolResult, type CreateTaskResult as LegacyCreateTaskResult, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { canUseTool, credentialName, type Principal } from '../identity/principal';
import { AppException, type ErrorBody } from '../common/errors';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppConfig } from '../config/app-config';
import { asksNoCache } from '../executions/request/invoke-request';
import type { ProgressListener } from '../executions/engine/execution-runner';
import { InputRounds } from '../executions/request/input-rounds';
import { invocationAnswer, InvocationService } from '../executions/request/invocation.service';
import { RegisteredTool, ToolCatalogue } from '../tools/tool-catalogue';
import { appMetaOf } from './mcp-apps';
import { AccountTools } from '../tools/account-tools';
import { pageAfter } from './mcp-paging';
import { paramHeaderMismatch, type ParamHeader, type ParamHeaderMismatch } from './mcp-param-headers';
import { askingRound, inputRequired, stateRefusal, type Answering, type InputRequiredResult } from './mcp-questions';
import type { OutageLog } from '../common/outages';
import { factsOf, hideUnexpected, refusedCallResult, requireScope, toolCallResult, type RequestFacts } from './mcp-replies';
import { legacyCreated } from './mcp-legacy-tasks';
import { extensionCreated, McpTasks, missingTasksExtension, type CreateTaskResult } from './mcp-tasks';
import { inputsSchema } from '../workflows/workflow-document';
import { outputsSchema, PublishedWorkflows, toolIdOf } from '../workflows/published-workflows';
import { runAnswer, WorkflowRuns } from '../workflows/workflow-runs';
import type { Workflow } from '../workflows/workflow.entity';
import { ExecutionsService } from '../executions/request/executions.service';
import { EXECUTION_STATUS_VIEW, executionStatus } from './mcp-execution-tool';
import { EXECUTION_STATUS_TOOL } from './mcp-execution-uri';

/** What a tools/call brings besides its name and arguments. */
export interface CallContext extends RequestFacts {
  /** Made only if the tool runs; aborts on notifications/cancelled or when the client goes away (the execution is cancelled). */
  signal: () => AbortSignal;
  /** Set when the client sent a progressToken. */
  onProgress?: ProgressListener;
  /** False for `Cache-Control: no-cache`, as on REST. */
  cache: boolean;
  /** Milliseconds since the HTTP request arrived (the answer's timing). */
  elapsedMs(): number;
  /** How this request's revision takes tasks; absent: the client takes none (a `required` tool is refused). */
  tasks?: TaskOffer;
  /**
   * Set on 2026-07-28, whose clients answer a tool's questions (`input_required`): what this
   * request brings back, and the methods its declared capabilities answer.
   */
  answering?: Answering;
}

/** Tasks as a tools/call's revision offers them. */
export type TaskOffer =
  /** 2026-07-28 with the tasks extension declared: the server decides, a task-supporting tool answers with a task. */
  | { form: 'extension' }
  /**
   * 2025-11-25: the client decides, per call (`task` in its params); the tool's taskSupport must
   * agree, else -32601, as the revision says (MUST for a `required` tool called without, SHOULD
   * for `task` on a tool without support).
   */
  | { form: 'augmentation'; requested: boolean };

/** What every tools/call takes from its HTTP request, in every revision. */
export function callOf(request: FastifyRequest, reply: FastifyReply, outages: OutageLog): Pick<CallContext, 'cache' | 'requestId' | 'log' | 'outages' | 'elapsedMs'> {
  return { ...factsOf(request, outages), cache: !asksNoCache(request.headers['cache-control']), elapsedMs: () => reply.elapsedTime };
}

/**
 * The tool registry as MCP sees it: tools/list pages over a fixed order (by id) and tools/call
 * through the same validation, admission, cache and runner as REST invoke.
 */
@Injectable()
export class McpTools implements OnApplicationBootstrap {
  /** Built once, in name order: the catalogue is fixed after boot. */
  private catalogue: { name: string; tool: RegisteredTool; view: McpTool }[] = [];
  private readonly byName = new Map<string, RegisteredTool>();
  /** The inputs each tool mirrors into `Mcp-Param-*` headers, by MCP name (tools without any are absent). */
  private readonly headersByName = new Map<string, ParamHeader[]>();

  constructor(
    private readonly registry: ToolCatalogue,
    private readonly invocations: InvocationService,
    private readonly tasks: McpTasks,
    private readonly config: AppConfig,
    private readonly rounds: InputRounds,
    private readonly published: PublishedWorkflows,
    private readonly runs: WorkflowRuns,
    private readonly executions: ExecutionsService,
    @Optional() private readonly accountTools?: AccountTools,
  ) {}

  onApplicationBootstrap(): void {
    for (const tool of this.registry.all()) {
      const name = mcpName(tool);
      const previous = this.byName.get(name);
      if (previous) throw new Error(`Tools '${previous.definition.id}' and '${tool.definition.id}' have the same MCP name '${name}'`);
      this.byName.set(name, tool);
      const headers = Object.entries(tool.definition.input.properties).flatMap(([input, { type, 'x-mcp-header': header }]) => (header && type ? [{ input, header, type }] : []));
      if (headers.length > 0) this.headersByName.set(name, headers);
    }
    this.catalogue = [...this.byName].map(([name, tool]) => ({ name, tool, view: mcpToolView(name, tool) })).sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  /**
   * The built-in tools the key may use, its account's published workflows (docs/workflows.md#publishing),
   * its upstream servers' tools (docs/upstreams.md) and, with `executions:read`, execution.status
   * (docs/mcp.md#execution-status), in name order.
   */
  async list(principal: Principal, cursor: string | undefined): Promise<{ tools: McpTool[]; nextCursor?: string }> {
    requireScope(principal, 'tools:read');
    const workflows = (await this.published.published(principal)).map((workflow) => ({ name: toolIdOf(workflow), view: workflowToolView(workflow) }));
    const runnable = ((await this.accountTools?.of(principal)) ?? []).flatMap(({ id, runnable: tool }) => (tool ? [{ name: id, view: mcpToolView(id, tool) }] : []));
    const status = principal.scopes.has('executions:read') ? [{ name: EXECUTION_STATUS_TOOL, view: EXECUTION_STATUS_VIEW }] : [];
    const own = [...workflows, ...runnable, ...status];
    const builtIn = this.catalogue.filter(({ tool }) => canUseTool(principal, tool.definition.id));
    const visible = own.length === 0 ? builtIn : [...builtIn, ...own].sort((a, b) => (a.name < b.name ? -1 : 1));
    const { page, nextCursor } = pageAfter(visible, ({ name }) => name, cursor, this.config.MCP_PAGE_SIZE);
    return { tools: page.map(({ view }) => view), ...(nextCursor && { nextCursor }) };
  }

  /** The first disagreement between a 2026-07-28 call's arguments and its `Mcp-Param-*` headers (SEP-2243), if any. */
  paramHeaderMismatch(name: unknown, args: Record<string, unknown> | undefined, headerOf: (lowercaseName: string) => string | undefined): ParamHeaderMismatch | undefined {
    const declared = typeof name === 'string' ? this.headersByName.get(name) : undefined;
    return declared && paramHeaderMismatch(declared, args, headerOf);
  }

  /** Runs the tool, or with a client that takes tasks and a tool that supports them, starts it as a task. */
  async call(
    principal: Principal,
    name: string,
    args: Record<string, unknown> | undefined,
    context: CallContext,
  ): Promise<CallToolResult | CreateTaskResult | LegacyCreateTaskResult | InputRequiredResult> {
    // It reads an execution: executions:read, not tools:invoke.
    if (name === EXECUTION_STATUS_TOOL) return executionStatus(this.executions, principal, args).catch((err: unknown) => hideUnexpected(err, 'tools/call', context));
    requireScope(principal, 'tools:invoke');
    // Built-in, else an upstream server's tool (docs/upstreams.md), which runs the same way.
    const tool = this.byName.get(name) ?? (await this.accountTools?.runnable(principal, name));
    if (!tool) return this.callWorkflow(principal, name, args, context);
    if (!canUseTool(principal, tool.definition.id)) throw new McpError(ErrorCode.InvalidParams, `This ${credentialName(principal)} may not use tool '${name}'`);
    const offer = context.tasks;
    const asTask = runsAsTask(name, tool, offer);
    try {
      const input = tool.validateInput({ ...args });
      if (asTask && offer!.form === 'extension') {
        // SEP-2663: the tool's up-front questions come first, as sync rounds; the task exists once they are answered.
        const upFront = tool.handler.ask && context.answering ? await this.askUpFront(principal, tool, input, context.answering) : { answers: {} };
        if ('inputRequests' in upFront) return upFront;
        // Only a 2026-07-28 client answers a task's questions (tasks/update).
        return extensionCreated(await this.tasks.start(principal, tool, input, context.requestId, upFront));
      }
      if (asTask) return legacyCreated(await this.tasks.start(principal, tool, input, context.requestId));
      const outcome = await this.invocations.invokeSync({
        principal,
        tool,
        input,
        options: { async: false, cache: context.cache },
        requestId: context.requestId,
        callerGone: context.signal,
        onProgress: context.onProgress,
        answering: context.answering,
      });
      if ('inputRequests' in outcome) return inputRequired(outcome.inputRequests, outcome.requestState, context.answering!.methods);
      return toolCallResult(tool, outcome.execution, invocationAnswer(outcome, context.elapsedMs()).body);
    } catch (err) {
      const refusal = stateRefusal(err);
      if (refusal) throw refusal;
      // A call that asked to be a task awaits a CreateTaskResult, which cannot say it was refused: an error.
      if (err instanceof AppException && asTask && offer!.form === 'augmentation') throw refusedTask(err.body);
      // Refused before it ran (limits, invalid arguments): an error result the model can act on.
      if (err instanceof AppException) return refusedCallResult(err.body);
      hideUnexpected(err, 'tools/call', context);
    }
  }

  /**
   * A published workflow called as a tool: a run, waited for (up to its timeout, at most 300 s) and
   * answered with its outputs; with a client that takes tasks, a task that is the run.
   */
  private async callWorkflow(principal: Principal, name: string, args: Record<string, unknown> | undefined, context: CallContext): Promise<CallToolResult | CreateTaskResult | LegacyCreateTaskResult> {
    const workflow = await this.published.byToolId(principal, name);
    if (!workflow) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const offer = context.tasks;
    const asTask = offer?.form === 'extension' || (offer?.form === 'augmentation' && offer.requested);
    try {
      const run = await this.runs.startWorkflow(principal, workflow, { ...args }, { mode: asTask ? 'async' : 'sync', requestId: context.requestId });
      if (asTask) {
        const task = this.tasks.adopt(principal, run);
        return offer.form === 'extension' ? extensionCreated(task) : legacyCreated(task);
      }
      const ended = await this.runs.waitForEnd(run.id, Math.min(workflow.document.timeout, MAX_WORKFLOW_WAIT_SECONDS) * 1000, context.signal());
      const answer = runAnswer(ended);
      if (answer.status === 202) return { isError: true, content: [{ type: 'text', text: JSON.stringify(answer.body) }], _meta: { execution_id: ended.id } };
      return toolCallResult({ definition: {} } as Pick<RegisteredTool, 'definition'>, ended, answer.body);
    } catch (err) {
      if (err instanceof AppException) return refusedCallResult(err.body);
      hideUnexpected(err, 'tools/call', context);
    }
  }

  /** The answers to a tool's `ask` questions so far, or the questions still open. */
  private async askUpFront(principal: Principal, tool: RegisteredTool, input: Record<string, unknown>, answering: Answering): Promise<{ answers: Record<string, unknown> } | InputRequiredResult> {
    return askingRound(this.rounds, { keyId: principal.keyId, subject: tool.definition.id, input }, answering, (ctx) => tool.handler.ask!(structuredClone(input), ctx));
  }
}

/** Whether the call becomes a task; throws the revision's refusal when the tool and the request disagree. */
function runsAsTask(name: string, { definition }: RegisteredTool, offer: TaskOffer | undefined): boolean {
  const support = definition.task_support;
  if (offer?.form === 'augmentation') {
    if (offer.requested && !support) throw new McpError(ErrorCode.MethodNotFound, `Tool '${name}' does not support task-augmented calls (its execution.taskSupport is 'forbidden'): call it without \`task\``);
    if (!offer.requested && support === 'required') throw new McpError(ErrorCode.MethodNotFound, `Tool '${name}' runs only as a task (execution.taskSupport 'required'): call it with \`task\` in the params`);
    return offer.requested;
  }
  if (support === 'required' && !offer) throw missingTasksExtension();
  return offer !== undefined && support !== undefined;
}

/** Parameters at fault (invalid arguments, a workspace not found) are -32602; anything else (limits, an unavailable queue) -32603; the REST error rides as `data`. */
function refusedTask(error: ErrorBody): McpError {
  const params = error.code === 'INVALID_INPUT' || error.code === 'INVALID_REQUEST' || error.code === 'NOT_FOUND';
  return new McpError(params ? ErrorCode.InvalidParams : ErrorCode.InternalError, error.message, { error });
}

/** How long a sync tools/call of a workflow waits for its run; a longer one answers where to follow it (or runs as a task). */
const MAX_WORKFLOW_WAIT_SECONDS = 300;

function workflowToolView(workflow: Workflow): McpTool {
  const { document } = workflow;
  return {
    name: toolIdOf(workflow),
    title: workflow.name,
    description: document.description ?? `Runs the workflow '${workflow.name}' (${document.steps.length} steps)`,
    inputSchema: inputsSchema(document) as McpTool['inputSchema'],
    outputSchema: outputsSchema(document) as McpTool['outputSchema'],
    annotations: { title: workflow.name, readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    _meta: { category: 'automation', version: String(workflow.version), kind: 'workflow', workflow_id: workflow.id },
    execution: { taskSupport: 'optional' },
  };
}

function mcpName({ definition }: RegisteredTool): string {
  return definition.mcp?.name ?? definition.id;
}

/** name = the tool's MCP name; both schemas are the ones the REST validator compiled; effects become annotations. */
function mcpToolView(name: string, { definition: d, inputSchema, outputSchema }: RegisteredTool): McpTool {
  return {
    name,
    title: d.name,
    description: d.description,
    inputSchema: inputSchema as McpTool['inputSchema'],
    outputSchema: outputSchema as McpTool['outputSchema'],
    annotations: {
      title: d.name,
      readOnlyHint: d.effects === 'read',
      destructiveHint: d.effects === 'destructive',
      idempotentHint: d.idempotent,
      openWorldHint: d.open_world,
    },
    _meta: { category: d.category, version: d.version, status: d.status, ...appMetaOf(d.id) },
    ...(d.task_support && { execution: { taskSupport: d.task_support } }),
  };
}
