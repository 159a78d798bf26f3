import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import { Repository } from 'typeorm';
import { newExecutionId } from '../common/ids';
import { ERROR_STATUS } from '../common/errors';
import type { Principal } from '../identity/principal';
import { executionView } from '../executions/request/execution-views';
import { type InvokeQuery, parseInvokeRequest } from '../executions/request/invoke-request';
import { inputErrorToException } from '../tools/input-errors';
import type { ToolInputProperty } from '../tools/sdk';
import { Execution, TERMINAL_STATUSES } from '../executions/engine/execution.entity';
import { ExecutionEventBus, statusEvent } from '../executions/engine/events/execution-events';
import { ExecutionsStore } from '../executions/engine/executions.store';
import { NEW_RUN_STATE } from './run-plan';
import { storePrincipal } from './run-principal';
import { RunStore } from './run-store';
import { inputsSchema, type WorkflowDocument } from './workflow-document';
import { WorkflowEngine } from './workflow-engine';
import { Workflow, WorkflowRun } from './workflow.entity';
import { WORKFLOW_TOOL_PREFIX, WorkflowsService } from './workflows.service';

/** What started a run besides its caller: a schedule or a trigger (their ids are kept with the run). */
export interface RunOrigin {
  /** The run's execution id, when its starter chose it beforehand (a schedule's tick, a trigger's event: src/orchestration). */
  executionId?: string;
  mode?: 'sync' | 'async';
  requestId?: string | null;
  scheduleId?: string;
  triggerId?: string;
}

/** How long a sync run is waited for when the request names no timeout (seconds). */
const DEFAULT_SYNC_WAIT_SECONDS = 30;

/** What a run request answers: its HTTP status and body. */
export interface RunAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** How often a waiting caller looks at the run's row, besides its status events (which may be lost across processes). */
const WAIT_POLL_MS = 1_000;

/**
 * Starting workflow runs and waiting on them: the one way in for REST, MCP (a published workflow
 * called as a tool), schedules and triggers. A run is an execution of kind `workflow` whose
 * steps are its child executions; the engine advances it.
 */
@Injectable()
export class WorkflowRuns {
  private readonly inputs = new Ajv2020({ strict: false, useDefaults: true, allErrors: false });
  private readonly validators = new WeakMap<WorkflowDocument, ValidateFunction>();

  constructor(
    private readonly workflows: WorkflowsService,
    private readonly store: ExecutionsStore,
    private readonly runs: RunStore,
    private readonly engine: WorkflowEngine,
    private readonly events: ExecutionEventBus,
    @InjectRepository(WorkflowRun) private readonly runRows: Repository<WorkflowRun>,
  ) {}

  /**
   * Starts a run of the account's workflow at its current version, as `principal` (every step is
   * admitted as that key's own call). The service method schedules and triggers call.
   */
  async start(principal: Principal, workflowId: string, inputs: Record<string, unknown>, origin: RunOrigin = {}): Promise<Execution> {
    return this.startWorkflow(principal, await this.workflows.get(principal.accountId, workflowId), inputs, origin);
  }

  async startWorkflow(principal: Principal, workflow: Workflow, inputs: Record<string, unknown>, origin: RunOrigin = {}): Promise<Execution> {
    const { document } = workflow;
    const input = this.validInputs(document, inputs);
    const now = new Date();
    const execution = Object.assign(new Execution(), {
      id: origin.executionId ?? newExecutionId(now.getTime()),
      account_id: principal.accountId,
      key_id: principal.keyId,
      tool_id: `${WORKFLOW_TOOL_PREFIX}${workflow.name}`,
      tool_version: String(workflow.version),
      status: 'running',
      mode: origin.mode ?? 'async',
      progress: 0,
      progress_message: null,
      input,
      result: null,
      error: null,
      request_id: origin.requestId ?? null,
      created_at: now,
      started_at: now,
      completed_at: null,
      duration_ms: null,
      // The run's deadline: the sweeper ends a run still going past it (docs/executions.md).
      timeout_seconds: document.timeout,
      input_requests: null,
      input_responses: null,
      waiting_since: null,
      sealed_inputs: null,
      unaskable: null,
      claimed_by: null,
      schedule_id: origin.scheduleId ?? null,
      trigger_id: origin.triggerId ?? null,
      kind: 'workflow',
      parent_execution_id: null,
      step_key: null,
      upstream_task: null,
    } satisfies Execution);
    await this.runs.insert(
      Object.assign(new WorkflowRun(), {
        execution_id: execution.id,
        account_id: principal.accountId,
        workflow_id: workflow.id,
        version: workflow.version,
        document,
        principal: storePrincipal(principal),
        state: NEW_RUN_STATE,
        wake: 0,
        lease_until: null,
        leased_by: null,
        schedule_id: origin.scheduleId ?? null,
        trigger_id: origin.triggerId ?? null,
      }),
      execution,
    );
    this.events.publish(statusEvent(execution));
    await this.engine.advance(execution.id);
    return execution;
  }

  /**
   * A run request as REST takes it (POST /v1/workflows/{id}/runs, or an invoke of a published
   * workflow): an invoke's body and options; async answers at once, sync waits up to its timeout.
   */
  async request(principal: Principal, workflow: Workflow, body: unknown, query: InvokeQuery, requestId: string): Promise<RunAnswer> {
    const { input, options } = parseInvokeRequest(`${WORKFLOW_TOOL_PREFIX}${workflow.name}`, body, query);
    const started = await this.startWorkflow(principal, workflow, input, { mode: options.async ? 'async' : 'sync', requestId });
    return runAnswer(options.async ? started : await this.waitForEnd(started.id, (options.timeout ?? DEFAULT_SYNC_WAIT_SECONDS) * 1000));
  }

  /** The run once it has ended, or as it stands after `timeoutMs` (it goes on). */
  async waitForEnd(runId: string, timeoutMs: number, signal?: AbortSignal): Promise<Execution> {
    const deadline = Date.now() + timeoutMs;
    let wake: () => void = () => undefined;
    const unsubscribe = this.events.subscribe(runId, (event) => {
      if (event.type === 'status' && (TERMINAL_STATUSES.has(event.status) || event.status === 'input_required')) wake();
    });
    try {
      for (;;) {
        const current = await this.store.find(runId);
        if (!current || TERMINAL_STATUSES.has(current.status) || current.status === 'input_required' || Date.now() >= deadline || signal?.aborted) return current!;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(WAIT_POLL_MS, deadline - Date.now()));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    } finally {
      unsubscribe();
    }
  }

  /** A workflow's runs (every version), newest first. */
  async page(accountId: string, workflowId: string, limit: number, offset: number): Promise<{ runs: Execution[]; total: number }> {
    await this.workflows.get(accountId, workflowId);
    const [rows, total] = await this.runRows.findAndCount({ where: { account_id: accountId, workflow_id: workflowId }, relations: { execution: true }, order: { execution_id: 'DESC' }, take: limit, skip: offset });
    return { runs: rows.map((row) => row.execution!), total };
  }

  /** The run's input: `inputs` with the document's defaults; throws the 400 an invoke with bad inputs gets. */
  validInputs(document: WorkflowDocument, inputs: Record<string, unknown>): Record<string, unknown> {
    let validate = this.validators.get(document);
    if (!validate) this.validators.set(document, (validate = this.inputs.compile(inputsSchema(document))));
    const input = structuredClone(inputs);
    if (!validate(input)) throw inputErrorToException(validate.errors ?? [], input, document.inputs as unknown as Record<string, ToolInputProperty>);
    return input;
  }
}

/** A run as a run request answers it: its outcome once ended (like an invoke's), else where to follow it. */
export function runAnswer(run: Execution): RunAnswer {
  const statusUrl = `/v1/executions/${run.id}`;
  if (run.status === 'success') return { status: 200, body: { status: 'success', execution_id: run.id, result: run.result, duration_ms: run.duration_ms } };
  if (run.status === 'error') return { status: ERROR_STATUS[run.error!.code] ?? 500, body: { status: 'error', execution_id: run.id, error: run.error } };
  if (run.status === 'cancelled') return { status: 409, body: { status: 'cancelled', execution_id: run.id, error: { code: 'CONFLICT', message: 'The run was cancelled', retryable: false } } };
  return { status: 202, body: { ...executionView(run), execution_id: run.id, status_url: statusUrl, message: `Run ${run.status}; follow it at ${statusUrl} or ${statusUrl}/events` } };
}
