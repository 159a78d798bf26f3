import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { mkdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Principal } from '../../identity/principal';
import { AppException, ErrorBody } from '../../common/errors';
import { newExecutionId } from '../../common/ids';
import { credentialInputNames, redactStoredInput, ToolError, ToolLogger, Workspace, type InputRequest } from '../../tools/sdk';
import { ToolThreads } from '../../tools/isolation/tool-threads';
import { RegisteredTool, ToolCatalogue } from '../../tools/tool-catalogue';
import { RuntimeTools } from '../../tools/runtime-tools';
import { WORKSPACE } from '../../tools/tools.module';
import { createWorkspace } from '../../tools/workspace';
import { WorkspacesService } from '../../workspaces/workspaces.service';
import { AppConfig } from '../../config/app-config';
import { EgressPool, egressSettingsOf, type EgressSettings } from '../../tools/egress/egress';
import { SecretsService } from '../../secrets/secrets.service';
import { createToolContext, type ToolContextParts } from '../../tools/context/tool-context';
import { ExecutionEventBus, statusEvent } from './events/execution-events';
import { Execution } from './execution.entity';
import { ExecutionsStore, TerminalFields, terminalColumns } from './executions.store';
import { ProgressThrottle } from './progress-throttle';
import { captureTrace, observeExecution, resumeTrace } from '../../common/probes';
import { LOST_PROCESS_ERROR, LOST_WORKER_ERROR, outcomeUnknown, reportAbandoned, SECRETS_LOST_ERROR } from './abandoned';
import { PROCESS_ID, processClaim } from './process-claim';
import { ExecutionJob, ExecutionQueue, jobIdOf } from './queue/execution-queue';
import { answerOrAsk, askThenExecute, rejectOnAbort } from '../../tools/caller-questions';

/** Progress is persisted at most this often per execution. */
const PROGRESS_INTERVAL_MS = 250;

/**
 * A sync execution still running after this long is written as `running` (visible to listings
 * and cancellable while it runs); one that finishes sooner is written once, already finished.
 */
export const RUNNING_ROW_DELAY_MS = 50;
/** A sync execution's end is written this many times at most, 200 then 400 ms apart, when the database refuses. */
const END_WRITE_ATTEMPTS = 3;
/**
 * A queued execution's end, this many (200 ms doubling up to 5 s apart: about 26 s in all): its
 * worker holds the job meanwhile, and a database that comes back in time gets the true outcome
 * instead of the sweeper's "may have run".
 */
const JOB_END_WRITE_ATTEMPTS = 10;
const END_WRITE_RETRY_MS = 200;
const END_WRITE_MAX_RETRY_MS = 5_000;

/** How a call was asked to run. */
export interface InvokeOptions {
  /** Seconds; undefined = the tool's own timeout. */
  timeout?: number;
  async: boolean;
  cache: boolean;
}

export interface RunRequest {
  principal: Principal;
  tool: RegisteredTool;
  /** Validated input (defaults applied, unknown members stripped). */
  input: Record<string, unknown>;
  options: InvokeOptions;
  requestId: string | null;
  /** Fires when a sync caller goes away: its execution is cancelled. */
  callerGone?: AbortSignal;
  /** Hears the tool's progress as it is recorded (at most every 250 ms). */
  onProgress?: ProgressListener;
  /** Set when the caller can be asked for input (a sync call on a door that carries questions; an async one's answers so far). */
  asking?: Asking;
  /** An async call whose caller cannot be asked (an MCP 2025-11-25 task, which has no way to carry questions). */
  unaskable?: boolean;
  /** A workflow step: the run it belongs to and its key there. */
  parent?: { executionId: string; stepKey: string };
  /** What started an async call other than its caller: a schedule's tick or a trigger's event (src/orchestration). */
  origin?: ExecutionOrigin;
}

/**
 * A schedule's or a trigger's run: its execution id is chosen before the run is claimed, so a
 * run taken over after its process died finds the execution it may already have started.
 */
export interface ExecutionOrigin {
  executionId: string;
  scheduleId?: string;
  triggerId?: string;
}

/** A caller that can be asked: the answers it brought, by question key (none on a first round), and what it can answer. */
export interface Asking {
  answers: Readonly<Record<string, unknown>>;
  /** The input request methods the caller can answer; every one when absent. */
  methods?: ReadonlySet<InputRequest['method']>;
}

export type ProgressListener = (percent: number, message: string | null) => void;

export interface RunOutcome {
  execution: Execution;
  /** Time spent inside the tool. */
  executionMs: number;
  /** False when the tool ran but its record could not be written (the database was away): the caller must be told. */
  recorded: boolean;
}

/**
 * A sync run that stopped at questions for its caller (`ctx.requestInput`), by key. It is not an
 * outcome of the call: nothing of it is kept, and the caller calls again with the answers.
 */
export interface InputStop {
  status: 'input_required';
  inputRequests: Record<string, InputRequest>;
}

export type AskedOutcome = InputStop & Pick<RunOutcome, 'executionMs'>;

type AbortKind = 'timeout' | 'cancel' | 'shutdown' | 'input';

/** Why an execution's signal fired. */
class AbortReason extends Error {
  constructor(
    readonly kind: AbortKind,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A tool that threw something other than a ToolError: a defect, not an error it reported.
 * `details.crashed` tells the two apart (an MCP task of a crashed tool is `failed`, not an error result).
 */
export function crashed(toolId: string): ErrorBody {
  return { code: 'TOOL_ERROR', message: `Tool '${toolId}' failed unexpectedly`, retryable: false, details: { crashed: true } };
}

/**
 * Runs tools: one execution row per call, the tool's AbortSignal for timeout and cancel,
 * throttled progress, output validation, and a conditional terminal write so the first
 * terminal state wins (a late result after a cancel is discarded). Sync calls run here;
 * async ones are queued and run by `runJob` in whichever worker takes them.
 */
@Injectable()
export class ExecutionRunner implements OnModuleInit {
  private readonly logger = new Logger(ExecutionRunner.name);
  private readonly active = new Map<string, AbortController>();
  private readonly egress: EgressSettings;

  constructor(
    private readonly store: ExecutionsStore,
    private readonly registry: ToolCatalogue,
    private readonly queue: ExecutionQueue,
    private readonly events: ExecutionEventBus,
    @Inject(WORKSPACE) private readonly workspace: Workspace,
    private readonly threads: ToolThreads,
    private readonly secrets: SecretsService,
    private readonly workspaces: WorkspacesService,
    private readonly egresses: EgressPool,
    private readonly runtimeTools: RuntimeTools,
    appConfig: AppConfig,
  ) {
    this.egress = egressSettingsOf(appConfig);
  }

  /** The process that runs tools makes WORKSPACE_ROOT; one that only reads the catalogue (the operator CLI) leaves the disk alone. */
  onModuleInit(): void {
    mkdirSync(this.workspace.root, { recursive: true });
  }

  /**
   * Starts the tool at once. One that finishes within RUNNING_ROW_DELAY_MS is inserted in its
   * terminal state (one write); a longer one is inserted as `running` and finished as usual. Its
   * caller learns the id only from the answer, so before the row exists nothing can address it
   * except this call's own signals (timeout, caller gone), which end it like any other.
   * A `running` row that cannot be written does not stop the tool (its effects may be under way):
   * its end is inserted instead, and the outcome says whether any record was written.
   */
  runSync(request: RunRequest & Required<Pick<RunRequest, 'asking'>>): Promise<RunOutcome | AskedOutcome>;
  runSync(request: RunRequest): Promise<RunOutcome>;
  async runSync(request: RunRequest): Promise<RunOutcome | AskedOutcome> {
    const execution = this.newExecution(request, 'sync');
    const started = performance.now();
    const run = this.execute(request.principal.keyId, execution.id, request.principal.accountId, request.tool, request.input, this.timeoutOf(request), request).then((fields) => ({
      fields,
      executionMs: performance.now() - started,
    }));
    const early = await settledWithin(run, RUNNING_ROW_DELAY_MS);
    if (early?.fields.status === 'input_required') return { ...early.fields, executionMs: early.executionMs };
    if (early) {
      const finished = Object.assign(execution, terminalColumns(early.fields, execution.started_at));
      const recorded = await this.recordEnd(finished, END_WRITE_ATTEMPTS, () => this.store.insert(finished));
      if (recorded) this.publishStatus(finished);
      return { execution: finished, executionMs: early.executionMs, recorded };
    }
    const runningRow = await this.store.insert(execution).then(
      () => true,
      () => false,
    );
    const { fields, executionMs } = await run;
    if (fields.status === 'input_required') {
      if (runningRow) await this.store.discard(execution.id);
      return { ...fields, executionMs };
    }
    const ended = Object.assign(execution, terminalColumns(fields, execution.started_at));
    let written: Execution | undefined;
    const recorded = await this.recordEnd(ended, END_WRITE_ATTEMPTS, async () => {
      if (runningRow) written = await this.store.finish(execution.id, fields, execution.started_at);
      else {
        await this.store.insert(ended);
        written = ended;
      }
    });
    if (written) this.publishStatus(written);
    return { execution: written ?? ended, executionMs, recorded };
  }

  /**
   * Writes an execution's end, trying again (backing off) when the database refuses. The tool has
   * run and its effects are done, so a sync caller gets its outcome either way: a write that still
   * fails is logged as a lost record (a row left running is ended later by the sweeper). True when written.
   */
  private async recordEnd(execution: Pick<Execution, 'id' | 'tool_id' | 'status'>, attempts: number, write: () => Promise<void>): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        await write();
        return true;
      } catch (err) {
        if (attempt >= attempts) {
          this.logger.error(`Execution ${execution.id} of '${execution.tool_id}' ended ${execution.status} but its record could not be written (${(err as Error).message}); the sweeper will end it as outcome unknown`);
          return false;
        }
        await sleep(Math.min(END_WRITE_RETRY_MS * 2 ** (attempt - 1), END_WRITE_MAX_RETRY_MS));
      }
    }
  }

  /**
   * Records the execution as queued and hands it to the queue. When the queue refuses, the row is
   * removed (the caller gets a 503 and no execution); if even that fails, the 503 names it.
   */
  async submit(request: RunRequest): Promise<Execution> {
    const execution = this.newExecution(request, 'async');
    const jobInput = this.jobInput(execution.id, request.tool, request.input);
    // The row keeps the sealed credentials too: a lost job is queued again from the row alone.
    execution.sealed_inputs = jobInput.sealedInputs ?? null;
    await this.store.insert(execution);
    this.publishStatus(execution); // before the enqueue: a fast worker's `running` must not precede it
    try {
      await this.queue.enqueue({
        executionId: execution.id,
        toolId: execution.tool_id,
        ...jobInput,
        timeoutSeconds: this.timeoutOf(request),
        trace: captureTrace(),
        ...(request.unaskable && { unaskable: true }),
      });
    } catch (err) {
      await this.store.discard(execution.id, 'queued').catch(() => {
        if (err instanceof AppException) err.options.details = { ...err.options.details, execution_id: execution.id };
      });
      throw err;
    }
    return execution;
  }

  /**
   * Records a call refused before it could be queued (admission, input) as an execution already
   * ended in `error`: a workflow step's refusal is kept like any outcome of the step.
   */
  async recordRefusal(request: RunRequest, error: ErrorBody): Promise<Execution> {
    const execution = Object.assign(this.newExecution(request, 'async'), terminalColumns(terminal('error', null, error), null), { waiting_since: null });
    await this.store.insert(execution);
    this.publishStatus(execution);
    return execution;
  }

  /**
   * Worker side of `submit`: runs a queued job unless it was cancelled meanwhile. The tool starts
   * only once its `running` write is confirmed, and nothing after that throws: a handler that
   * throws has not started its tool, and the queue tries it again. The write claims the row for
   * this job, so a try after a write that committed but whose reply was lost (the connection cut)
   * takes the row it claimed itself; a row another job claimed is left alone. Bull never runs a
   * stalled job again (maxStalledCount 0), so a claim is never taken over while its tool runs.
   */
  async runJob(job: ExecutionJob): Promise<void> {
    const started = await this.store.start(job.executionId, new Date(), jobIdOf(job)).catch((err: Error) => {
      this.logger.warn(`Execution ${job.executionId} could not be started (${err.message}); its job is tried again`);
      throw err;
    });
    if (!started) return; // cancelled, taken by another job, or finished before a worker got to it
    this.publishStatus(started);
    const fields = await this.runStarted(job, started);
    const ending = { id: job.executionId, tool_id: job.toolId, status: fields.status };
    if (fields.status === 'input_required') {
      await this.recordEnd(ending, JOB_END_WRITE_ATTEMPTS, async () => {
        const waiting = await this.store.awaitInput(job.executionId, fields.inputRequests, new Date());
        if (waiting) this.publishStatus(waiting);
      });
      return;
    }
    await this.recordEnd(ending, JOB_END_WRITE_ATTEMPTS, async () => void (await this.finish(job.executionId, fields, started.started_at)));
  }

  /** A started job's outcome: the tool's, or the error that kept it from running here. */
  private async runStarted(job: ExecutionJob, started: Execution): Promise<TerminalFields | InputStop> {
    // An account's tool added at run time (an upstream's, docs/upstreams.md) is looked up as the job starts.
    const tool = this.registry.has(job.toolId) ? this.registry.get(job.toolId) : await this.runtimeTools.find(started.account_id, job.toolId);
    if (!tool) {
      return terminal('error', null, { code: 'TOOL_ERROR', message: `Tool '${job.toolId}' is not installed on this worker`, retryable: true });
    }
    let input = job.input;
    try {
      if (job.sealedInputs) input = { ...input, ...this.secrets.openJobInputs(job.executionId, job.sealedInputs) };
    } catch {
      return terminal('error', null, { code: 'INTERNAL_ERROR', message: "The call's secret inputs were sealed with a key this worker does not hold (SECRETS_KEY); submit it again", retryable: true });
    }
    // A re-run after answers reads its input from the row, where credentials are never kept: a call
    // holding any (redactStoredInput) cannot be asked (the tool is told it cannot, and fails saying so).
    const asking = job.unaskable || credentialInputNames(tool.definition.input.properties, input).length > 0 ? undefined : { answers: started.input_responses ?? {} };
    return resumeTrace(job.trace, () => this.execute(started.key_id, job.executionId, started.account_id, tool, input, job.timeoutSeconds, { asking }));
  }

  /**
   * Records answers to an async execution's questions; once all are answered it is queued again
   * and runs from the start with them. CONFLICT when it no longer waits for input.
   */
  async answer(execution: Execution, responses: Record<string, unknown>): Promise<Execution> {
    const after = await this.store.answer(execution.id, responses, new Date());
    if (!after) throw new AppException('CONFLICT', `Execution ${execution.id} is not waiting for input`);
    if (after.status === 'queued') {
      try {
        await this.queue.enqueue(this.jobOf(after));
      } catch (err) {
        return this.finish(after.id, terminal('error', null, { code: 'INTERNAL_ERROR', message: (err as Error).message, retryable: true }), after.started_at);
      }
    }
    this.publishStatus(after);
    return after;
  }

  /**
   * Queues a `queued` execution again from its row, its job lost (a restart of the embedded queue,
   * Redis losing its data, a job dropped while the database was down). A call whose credentials
   * cannot be recovered ends, saying so. Answers whether it was queued.
   */
  async requeue(execution: Execution, by: 'reconciler' | 'restart'): Promise<boolean> {
    const tool = this.registry.has(execution.tool_id) ? this.registry.get(execution.tool_id) : null;
    // The stored input has credentials redacted: without their sealed copy the call cannot run.
    if (tool && !execution.sealed_inputs && credentialInputNames(tool.definition.input.properties, execution.input).length > 0) {
      const ended = await this.finish(execution.id, terminal('error', null, SECRETS_LOST_ERROR), null);
      if (ended.error?.message === SECRETS_LOST_ERROR.message) reportAbandoned(this.logger, execution.id, by, 'secrets_lost');
      return false;
    }
    await this.queue.enqueue(this.jobOf(execution));
    return true;
  }

  /** The job that runs a queued row (after answers: a run with them, under a job id of its own). */
  jobOf(execution: Execution): ExecutionJob {
    const tool = this.registry.has(execution.tool_id) ? this.registry.get(execution.tool_id) : null;
    return {
      executionId: execution.id,
      toolId: execution.tool_id,
      input: execution.input,
      ...(execution.sealed_inputs && { sealedInputs: execution.sealed_inputs }),
      timeoutSeconds: execution.timeout_seconds ?? tool?.definition.timeout ?? 300,
      ...(execution.input_requests && { answered: Object.keys(execution.input_responses ?? {}).length }),
      ...(execution.unaskable && { unaskable: true as const }),
    };
  }

  /** A queued call's input for its job: its credential inputs sealed when SECRETS_KEY is set, so the queue never holds them in clear. */
  private jobInput(executionId: string, tool: RegisteredTool, input: Record<string, unknown>): Pick<ExecutionJob, 'input' | 'sealedInputs'> {
    const names = credentialInputNames(tool.definition.input.properties, input);
    if (names.length === 0) return { input };
    const sealedInputs = this.secrets.sealJobInputs(executionId, Object.fromEntries(names.map((name) => [name, input[name]])));
    return sealedInputs ? { input: redactStoredInput(tool.definition.input.properties, input), sealedInputs } : { input };
  }

  /**
   * Cancels an active execution: the first terminal state wins in the database; a waiting job
   * leaves the queue; a running one is aborted here or, through the `cancelled` event, in the
   * process that runs it.
   */
  async cancel(execution: Execution): Promise<Execution> {
    const after = await this.finish(execution.id, terminal('cancelled', null, null), execution.started_at);
    if (after.status === 'cancelled') {
      if (execution.mode === 'async') await this.queue.remove(execution.id).catch(() => false);
      this.abort(execution.id);
    }
    return after;
  }

  /** Ends an execution whose worker vanished. */
  async markLost(executionId: string): Promise<void> {
    const current = await this.store.find(executionId);
    if (!current) return;
    const ended = await this.finish(executionId, terminal('error', null, LOST_WORKER_ERROR), current.started_at);
    if (ended.error?.message === LOST_WORKER_ERROR.message) reportAbandoned(this.logger, executionId, 'lost-worker', 'worker_lost');
  }

  /** Ends the sync executions a lost process was running (their callers are gone with it). */
  async endLostProcess(processId: string): Promise<number> {
    const ended = await this.store.endClaimed(processClaim(processId), LOST_PROCESS_ERROR, new Date());
    for (const execution of ended) {
      this.publishStatus(execution);
      reportAbandoned(this.logger, execution.id, 'lost-process', 'process_lost');
    }
    return ended.length;
  }

  /** Aborts an execution if it runs in this process; false when it does not. */
  abort(executionId: string, kind: AbortKind = 'cancel'): boolean {
    const controller = this.active.get(executionId);
    controller?.abort(new AbortReason(kind, kind === 'shutdown' ? 'The worker shut down before the execution finished and stopped it: it may have run in part.' : 'Execution cancelled'));
    return controller !== undefined;
  }

  /** Shutdown past its grace: abort what still runs here; each ends in a retryable error. */
  abortAll(): number {
    const ids = [...this.active.keys()];
    for (const id of ids) this.abort(id, 'shutdown');
    return ids.length;
  }

  get runningHere(): number {
    return this.active.size;
  }

  private newExecution(request: RunRequest, mode: 'sync' | 'async'): Execution {
    const { principal, tool, input, requestId } = request;
    const now = new Date();
    return Object.assign(new Execution(), {
      id: request.origin?.executionId ?? newExecutionId(now.getTime()),
      account_id: principal.accountId,
      key_id: principal.keyId,
      tool_id: tool.definition.id,
      tool_version: tool.definition.version,
      status: mode === 'sync' ? 'running' : 'queued',
      mode,
      progress: 0,
      progress_message: null,
      input: redactStoredInput(tool.definition.input.properties, input),
      result: null,
      error: null,
      request_id: requestId,
      created_at: now,
      started_at: mode === 'sync' ? now : null,
      completed_at: null,
      duration_ms: null,
      // Whole seconds (a timeout may be fractional): the deadline errs late, never early.
      timeout_seconds: Math.ceil(this.timeoutOf(request)),
      input_requests: null,
      // An async call may bring answers to the tool's up-front questions (an MCP task: SEP-2663).
      input_responses: mode === 'async' && request.asking ? { ...request.asking.answers } : null,
      waiting_since: mode === 'async' ? now : null,
      sealed_inputs: null,
      claimed_by: mode === 'sync' ? processClaim(PROCESS_ID) : null,
      unaskable: request.unaskable ?? null,
      schedule_id: request.origin?.scheduleId ?? null,
      trigger_id: request.origin?.triggerId ?? null,
      kind: 'tool',
      parent_execution_id: request.parent?.executionId ?? null,
      step_key: request.parent?.stepKey ?? null,
    });
  }

  private timeoutOf(request: RunRequest): number {
    return request.options.timeout ?? request.tool.definition.timeout;
  }

  private async finish(id: string, fields: TerminalFields, startedAt: Date | null): Promise<Execution> {
    const execution = await this.store.finish(id, fields, startedAt);
    this.publishStatus(execution);
    return execution;
  }

  private publishStatus(execution: Execution): void {
    this.events.publish(statusEvent(execution));
  }

  /**
   * The files a call reads: the account's uploaded workspace it names (unpacked in this process),
   * else the shared WORKSPACE_ROOT; at the git `ref` it names, when the tool takes one.
   */
  private async workspaceFor(accountId: string, tool: RegisteredTool, input: Record<string, unknown>): Promise<Workspace> {
    const { workspace: id, ref } = input;
    const inputs = tool.definition.input.properties;
    let root = this.workspace.root;
    if (typeof id === 'string' && inputs.workspace) {
      root = await this.workspaces.open(accountId, id).catch((error: unknown) => {
        // Admitted while it lived: it expired or was deleted before a worker took the call.
        if (error instanceof AppException && error.code === 'NOT_FOUND') throw ToolError.invalidInput('workspace', 'a live workspace of your account', id, `Workspace ${id} not found: it expired or was deleted`);
        throw error;
      });
    }
    // `ref` is a workspace ref only for tools that read workspaces (vcs-workflow's `ref` is a forge branch).
    if (typeof ref === 'string' && inputs.ref && inputs.workspace) root = await this.workspaces.openAtRef(root, ref);
    return root === this.workspace.root ? this.workspace : createWorkspace(root);
  }

  /** Every tool run, sync or queued, passes here once: the one place metrics and traces observe it. */
  private execute(keyId: string, ...args: Parameters<ExecutionRunner['executeTool']>): Promise<TerminalFields | InputStop> {
    return observeExecution({ executionId: args[0], toolId: args[2].definition.id, accountId: args[1], keyId }, () => this.executeTool(...args));
  }

  private async executeTool(
    id: string,
    accountId: string,
    tool: RegisteredTool,
    input: Record<string, unknown>,
    timeoutSeconds: number,
    { callerGone, onProgress, asking }: Pick<RunRequest, 'callerGone' | 'onProgress' | 'asking'> = {},
  ): Promise<TerminalFields | InputStop> {
    const { definition } = tool;
    const asked: Record<string, InputRequest> = {};
    const controller = new AbortController();
    this.active.set(id, controller);
    const timer = setTimeout(() => controller.abort(new AbortReason('timeout', `Tool '${definition.id}' did not finish within ${timeoutSeconds}s`)), timeoutSeconds * 1000);
    const onCallerGone = () => this.abort(id, 'cancel');
    callerGone?.addEventListener('abort', onCallerGone, { once: true });
    const progress = new ProgressThrottle(PROGRESS_INTERVAL_MS, (percent, message) => {
      this.events.publish({ type: 'progress', execution_id: id, progress: percent, message });
      onProgress?.(percent, message);
      this.store.recordProgress(id, percent, message).catch((err: Error) => this.logger.warn(`progress of ${id} not saved: ${err.message}`));
    });
    try {
      const parts: ToolContextParts = {
        executionId: id,
        signal: controller.signal,
        progress: (percent, message) => progress.report(percent, message),
        logger: toolLogger(new Logger(`tool:${definition.id}`), id),
        config: tool.config,
        workspace: await this.workspaceFor(accountId, tool, input),
        egress: this.egress,
        accountId,
        accountSecrets: this.secrets,
        ...(asking && {
          requestInput: (key, request) =>
            answerOrAsk(key, request, asking.answers, asked, () => controller.abort(new AbortReason('input', 'The tool asked its caller for input')), controller.signal),
          canAsk: (method) => asking.methods?.has(method) ?? true,
        }),
      };
      const run = tool.source ? this.threads.run(tool.source, input, parts, tool.secretSettings) : askThenExecute(tool.handler, input, createToolContext(parts, this.egresses.for(parts.egress)));
      // A tool that ignores its signal still ends when the signal fires; its late outcome is dropped.
      run.catch(() => undefined);
      const result = await Promise.race([run, rejectOnAbort(controller.signal)]);
      const problem = tool.outputProblem(result);
      if (problem) {
        this.logger.error(`Tool '${definition.id}' broke its output schema in ${id}: ${problem}`);
        return terminal('error', null, { code: 'TOOL_ERROR', message: `Tool '${definition.id}' returned a result that does not match its declared outputs`, retryable: false });
      }
      return terminal('success', result as Record<string, unknown>, null);
    } catch (err) {
      const reason: unknown = controller.signal.reason;
      if (reason instanceof AbortReason && reason.kind === 'input') return { status: 'input_required', inputRequests: asked };
      return this.failure(id, definition.id, controller.signal, err);
    } finally {
      clearTimeout(timer);
      callerGone?.removeEventListener('abort', onCallerGone);
      progress.stop();
      this.active.delete(id);
    }
  }

  private failure(id: string, toolId: string, signal: AbortSignal, err: unknown): TerminalFields {
    const reason = signal.aborted ? signal.reason : null;
    if (reason instanceof AbortReason) {
      if (reason.kind === 'cancel') return terminal('cancelled', null, null);
      if (reason.kind === 'shutdown') return terminal('error', null, outcomeUnknown(reason.message));
      return terminal('error', null, { code: 'TOOL_TIMEOUT', message: reason.message, retryable: true, suggestion: 'Retry with a larger timeout (at most 300 seconds)' });
    }
    if (err instanceof ToolError) {
      return terminal('error', null, {
        code: err.code,
        message: err.message,
        retryable: err.retryable,
        ...(err.details && { details: err.details }),
        ...(err.suggestion && { suggestion: err.suggestion }),
        ...(err.retryAfter !== undefined && { retry_after: err.retryAfter }),
      });
    }
    this.logger.error(`Tool '${toolId}' failed unexpectedly in ${id}: ${(err as Error)?.stack ?? String(err)}`);
    return terminal('error', null, crashed(toolId));
  }
}

export function terminal(status: TerminalFields['status'], result: Record<string, unknown> | null, error: ErrorBody | null): TerminalFields {
  return { status, result, error, completed_at: new Date() };
}

/** The promise's value if it settles within `ms`, else undefined (it keeps running). */
async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([promise, expiry]);
  } finally {
    clearTimeout(timer);
  }
}

function toolLogger(logger: Logger, executionId: string): ToolLogger {
  const line = (message: string, meta?: Record<string, unknown>) => ({ msg: message, execution_id: executionId, ...meta });
  return {
    debug: (message, meta) => logger.debug(line(message, meta)),
    info: (message, meta) => logger.log(line(message, meta)),
    warn: (message, meta) => logger.warn(line(message, meta)),
    error: (message, meta) => logger.error(line(message, meta)),
  };
}
