import { Injectable, Logger } from '@nestjs/common';
import { AppException, type ErrorBody } from '../common/errors';
import { AppConfig } from '../config/app-config';
import { workflowRunsEnded, workflowStepsStarted } from '../common/probes';
import { canUseTool, type Principal } from '../identity/principal';
import { ToolError } from '../tools/sdk';
import { KnownTools } from '../tools/known-tools';
import { TERMINAL_STATUSES, type Execution, type TerminalStatus } from '../executions/engine/execution.entity';
import { ExecutionEventBus, statusEvent } from '../executions/engine/events/execution-events';
import { ExecutionRunner, terminal } from '../executions/engine/execution-runner';
import { ExecutionsStore } from '../executions/engine/executions.store';
import { PROCESS_ID } from '../executions/engine/process-claim';
import { ExecutionsService } from '../executions/request/executions.service';
import { pendingInputRequests } from '../executions/request/execution-views';
import { InvocationService } from '../executions/request/invocation.service';
import { planRun, type RunPlan, type RunState, type StepExecution, type StepUnit } from './run-plan';
import { restorePrincipal } from './run-principal';
import { RunStore } from './run-store';
import { DEFAULTS, type WorkflowStep } from './workflow-document';
import { WorkflowExpressions, type ExpressionScope } from './workflow-expressions';
import type { WorkflowRun } from './workflow.entity';

/** Rounds of one advance: each round may skip steps and so make others ready; a document has at most this many steps. */
const MAX_ROUNDS = 64;
/** Times an advance looks again because another process asked it to while it held the run. */
const MAX_LOOKS = 5;
/** How long a key found valid is trusted before it is read again (a revoked key's runs start nothing after this). */
const KEY_CHECK_MS = 1_000;
/** Keys this process remembers as valid at most. */
const REMEMBERED_KEYS = 10_000;

/**
 * Moves workflow runs forward (docs/workflows.md#how-a-run-advances): under the run's lease it
 * reads the steps' executions, plans (run-plan.ts), and starts what is due — each call a queued
 * execution of its own, admitted under the run's key like an invoke — or ends the run. Any process
 * may advance any run: everything it reads is stored, and a call's key makes a second start of it
 * fail on the unique index, so a taken-over run re-runs nothing that succeeded.
 */
@Injectable()
export class WorkflowEngine {
  private readonly logger = new Logger(WorkflowEngine.name);
  /** Runs this process advances now; `again` when another advance of the same run was asked meanwhile. */
  private readonly advancing = new Map<string, { again: boolean }>();
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  private readonly shutdown = new AbortController();
  /** Keys found valid, and when. */
  private readonly validKeys = new Map<string, number>();
  /** One process owns an embedded database (its data-directory lock): the in-process guard is the lease. */
  private readonly shared: boolean;

  constructor(
    config: AppConfig,
    private readonly store: ExecutionsStore,
    private readonly runs: RunStore,
    private readonly runner: ExecutionRunner,
    private readonly invocation: InvocationService,
    private readonly executions: ExecutionsService,
    private readonly knownTools: KnownTools,
    private readonly expressions: WorkflowExpressions,
    private readonly events: ExecutionEventBus,
  ) {
    this.shared = Boolean(config.REDIS_URL);
  }



  /** Advances a run (best effort: a failure is logged, and the sweep comes back to it). */
  async advance(runId: string): Promise<void> {
    const current = this.advancing.get(runId);
    if (current) {
      current.again = true;
      return;
    }
    const mark = { again: false };
    this.advancing.set(runId, mark);
    try {
      for (let look = 0; look < MAX_LOOKS; look++) {
        mark.again = false;
        const run = this.shared ? await this.runs.lease(runId, PROCESS_ID, new Date()) : await this.runs.find(runId);
        if (!run) return;
        try {
          await this.step(run);
        } finally {
          const released = this.shared ? await this.runs.release(runId, PROCESS_ID, run.wake) : true;
          if (released && !mark.again) return;
        }
      }
    } catch (err) {
      this.logger.error(`Advancing workflow run ${runId} failed: ${(err as Error).message}; the sweep takes it up again`);
    } finally {
      this.advancing.delete(runId);
    }
  }

  /** Stops retry timers (shutdown); runs stay where they are, for the next process. */
  stop(): void {
    this.shutdown.abort();
    for (const timer of this.retryTimers.values()) clearTimeout(timer);
    this.retryTimers.clear();
  }

  private async step(run: WorkflowRun): Promise<void> {
    const id = run.execution_id;
    const execution = await this.store.find(id);
    if (!execution) return;
    if (TERMINAL_STATUSES.has(execution.status)) {
      await this.executions.cancelSteps(id);
      return;
    }
    const principal = restorePrincipal(run.principal);
    let state: RunState = run.state;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const children = await this.store.children(id);
      const plan = planRun(run.document, children as StepExecution[], state, Date.now());
      if (plan.failed) {
        await this.executions.cancelSteps(id);
        await this.end(execution, 'error', null, { ...plan.failed.error, message: `Step '${plan.failed.step}' failed: ${plan.failed.error.message}` });
        return;
      }
      const scope: ExpressionScope = { inputs: execution.input, steps: plan.steps };
      if (plan.complete) {
        await this.complete(execution, run, scope);
        return;
      }
      await this.reflect(execution, plan);
      let slots = run.document.concurrency - plan.active.length;
      for (const unit of plan.due) {
        if (slots <= 0) break;
        await this.startUnit(execution, principal, unit, scope);
        slots--;
      }
      const before = JSON.stringify(state);
      for (const step of plan.ready) {
        if (slots <= 0) break;
        const begun = await this.begin(execution, principal, step, scope, state);
        state = begun.state;
        if (begun.started) slots--;
      }
      if (JSON.stringify(state) !== before) {
        await this.runs.saveState(id, state);
        continue; // a skip or a for_each's items change what is ready or due
      }
      if (plan.nextRetryAt !== undefined) this.wakeAt(id, plan.nextRetryAt);
      return;
    }
  }

  /** Reads a ready step's `if` and `for_each`; starts its single call. Answers the run's decisions and whether a call started. */
  private async begin(execution: Execution, principal: Principal, step: WorkflowStep, scope: ExpressionScope, state: RunState): Promise<{ state: RunState; started: boolean }> {
    const signal = this.shutdown.signal;
    try {
      if (step.if !== undefined && !truthy(await this.expressions.evaluate(step.if, scope, signal))) {
        return { state: { ...state, skipped: [...state.skipped, step.id] }, started: false };
      }
      if (step.for_each !== undefined) {
        const items = await this.expressions.evaluate(step.for_each, scope, signal);
        const most = step.max_items ?? DEFAULTS.forEachItems;
        if (!Array.isArray(items)) throw new AppException('INVALID_INPUT', `for_each of step '${step.id}' gave ${typeof items}, not a list`, { details: { field: 'for_each' } });
        if (items.length > most) throw new AppException('INVALID_INPUT', `for_each of step '${step.id}' gave ${items.length} items, more than its max_items ${most}`, { details: { field: 'for_each' } });
        return { state: { ...state, items: { ...state.items, [step.id]: items.length } }, started: false };
      }
    } catch (err) {
      return { state: { ...state, failed: { ...state.failed, [step.id]: errorBodyOf(err) } }, started: false };
    }
    await this.startUnit(execution, principal, { step, attempt: 1, key: step.id }, scope);
    return { state, started: true };
  }

  /**
   * Starts one call of a step as the run's caller would invoke it async: its scope and tool
   * restriction, its input through the tool's schema, then admission (rate limit, quota) and the
   * queue. A refusal is recorded as the call's execution, ended in error, so the step fails (or
   * retries) like any failed call.
   */
  private async startUnit(run: Execution, principal: Principal, unit: StepUnit, scope: ExpressionScope): Promise<void> {
    const { step } = unit;
    const parent = { executionId: run.id, stepKey: unit.key };
    const itemScope = unit.index === undefined ? scope : { ...scope, item: undefined as unknown, index: unit.index };
    const request = { principal, options: { async: true, cache: false, ...(step.timeout !== undefined && { timeout: step.timeout }) }, requestId: run.request_id, parent };
    let input: Record<string, unknown> = {};
    try {
      const tool = await this.knownTools.find(principal.accountId, step.tool);
      if (!tool) throw new AppException('NOT_FOUND', `Tool '${step.tool}' is not installed`);
      if (!principal.scopes.has('tools:invoke')) throw new AppException('FORBIDDEN', "The run's API key lacks the scope tools:invoke");
      if (!(await this.callerValid(principal))) throw new AppException('UNAUTHORIZED', 'The API key that started this run was revoked or has expired: its steps start no more calls');
      if (!canUseTool(principal, step.tool)) throw new AppException('FORBIDDEN', `This API key may not use tool '${step.tool}'`, { details: { step: step.id } });
      if (unit.index !== undefined) itemScope.item = await this.itemOf(step, unit.index, scope);
      input = (await this.expressions.resolve(step.inputs, itemScope, this.shutdown.signal)) as Record<string, unknown>;
      input = tool.validateInput(input);
      await this.invocation.submit({ ...request, tool, input });
      workflowStepsStarted.publish({ toolId: step.tool, attempt: unit.attempt });
    } catch (err) {
      if (isDuplicateStart(err)) return; // another process started this very call
      const tool = await this.knownTools.find(principal.accountId, step.tool).catch(() => undefined);
      const refused = { ...request, input, tool: tool ?? placeholderTool(step.tool) };
      await this.runner.recordRefusal(refused, errorBodyOf(err)).catch((error: unknown) => {
        if (!isDuplicateStart(error)) throw error;
      });
    }
  }

  /**
   * Whether the run's key may still call. A console session's run, or an access token's, has no
   * key row to read: it may while the session or token lasts, as its snapshot says.
   */
  private async callerValid(principal: Principal): Promise<boolean> {
    const now = Date.now();
    if (principal.expiresAt && principal.expiresAt.getTime() <= now) return false;
    if (principal.keyType === 'session' || principal.keyType === 'oauth') return true;
    const checked = this.validKeys.get(principal.keyId);
    if (checked !== undefined && now - checked < KEY_CHECK_MS) return true;
    if (!(await this.runs.keyValid(principal.keyId, new Date(now)))) return false;
    if (this.validKeys.size >= REMEMBERED_KEYS) this.validKeys.clear();
    this.validKeys.set(principal.keyId, now);
    return true;
  }

  /** The item of a for_each call, read again (it is not stored): the list's expression is over what ended before it, so it gives the same list. */
  private async itemOf(step: WorkflowStep, index: number, scope: ExpressionScope): Promise<unknown> {
    const items = await this.expressions.evaluate(step.for_each!, scope, this.shutdown.signal);
    return Array.isArray(items) ? items[index] : undefined;
  }

  /** The run's own row follows its steps: `input_required` with a waiting step's questions, progress as steps end. */
  private async reflect(execution: Execution, plan: RunPlan): Promise<void> {
    const asking = plan.asking as Execution | undefined;
    if (asking && execution.status === 'running') {
      const waiting = await this.store.awaitInput(execution.id, pendingInputRequests(asking), new Date());
      if (waiting) this.publish(waiting);
    } else if (!asking && execution.status === 'input_required') {
      const resumed = await this.store.resumeWaiting(execution.id);
      if (resumed) this.publish(resumed);
    }
    if (plan.progress !== execution.progress) {
      const ended = Object.values(plan.steps).filter((step) => ['success', 'error', 'skipped'].includes(step.status)).length;
      await this.store.recordProgress(execution.id, plan.progress, `${ended} of ${Object.keys(plan.steps).length} steps ended`);
      this.events.publish({ type: 'progress', execution_id: execution.id, progress: plan.progress, message: null });
    }
  }

  private async complete(execution: Execution, run: WorkflowRun, scope: ExpressionScope): Promise<void> {
    let outputs: unknown;
    try {
      outputs = await this.expressions.resolve(run.document.outputs, scope, this.shutdown.signal);
    } catch (err) {
      const error = errorBodyOf(err);
      await this.end(execution, 'error', null, { ...error, message: `The workflow's outputs did not evaluate: ${error.message}`, details: { ...error.details, field: 'outputs' } });
      return;
    }
    await this.end(execution, 'success', outputs as Record<string, unknown>, null);
  }

  private async end(execution: Execution, status: TerminalStatus, result: Record<string, unknown> | null, error: ErrorBody | null): Promise<void> {
    const ended = await this.store.finish(execution.id, terminal(status, result, error), execution.started_at);
    this.publish(ended);
    if (ended.status === status) workflowRunsEnded.publish({ status, durationMs: ended.duration_ms ?? 0 });
  }

  private publish(execution: Execution): void {
    this.events.publish(statusEvent(execution));
  }

  /** A retry waiting for its backoff: advanced again when it is due (the sweep covers a process that stops first). */
  private wakeAt(runId: string, at: number): void {
    if (this.retryTimers.has(runId) || this.shutdown.signal.aborted) return;
    const timer = setTimeout(() => {
      this.retryTimers.delete(runId);
      void this.advance(runId);
    }, Math.max(0, at - Date.now()));
    timer.unref();
    this.retryTimers.set(runId, timer);
  }
}

/** JSONata's truth for `if`: false, null, 0, "", an empty list or no match skip the step. */
function truthy(value: unknown): boolean {
  return Array.isArray(value) ? value.length > 0 : Boolean(value);
}

function errorBodyOf(err: unknown): ErrorBody {
  if (err instanceof AppException) return err.body;
  if (err instanceof ToolError) {
    return { code: err.code, message: err.message, retryable: err.retryable, ...(err.details && { details: err.details }), ...(err.suggestion && { suggestion: err.suggestion }) };
  }
  return { code: 'INTERNAL_ERROR', message: 'The step could not be started', retryable: true };
}

/** PostgreSQL's unique violation: the step call's key (run, step, item, attempt) exists already. */
function isDuplicateStart(err: unknown): boolean {
  const code = (err as { code?: unknown; driverError?: { code?: unknown } })?.code ?? (err as { driverError?: { code?: unknown } })?.driverError?.code;
  return code === '23505';
}

/** Enough of a tool to record a refused call of one no longer installed. */
function placeholderTool(toolId: string) {
  return { definition: { id: toolId, version: 'unknown', timeout: 300, input: { properties: {} } } } as unknown as Parameters<ExecutionRunner['recordRefusal']>[0]['tool'];
}
