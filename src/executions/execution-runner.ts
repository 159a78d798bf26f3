import { Inject, Injectable, Logger } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import type { Principal } from '../auth/principal';
import { ErrorBody } from '../common/errors';
import { newExecutionId } from '../common/ids';
import { ToolError, ToolLogger, Workspace } from '../tools/sdk';
import type { RegisteredTool } from '../tools/tool-registry';
import { WORKSPACE } from '../tools/tools.module';
import { Execution } from './execution.entity';
import { ExecutionsStore, TerminalFields } from './executions.store';
import type { InvokeOptions } from './invoke-request';
import { ProgressThrottle } from './progress-throttle';

/** Progress is persisted at most this often per execution. */
const PROGRESS_INTERVAL_MS = 250;

export interface RunRequest {
  principal: Principal;
  tool: RegisteredTool;
  /** Validated input (defaults applied, unknown members stripped). */
  input: Record<string, unknown>;
  options: InvokeOptions;
  requestId: string | null;
}

export interface RunOutcome {
  execution: Execution;
  /** Time spent inside the tool. */
  executionMs: number;
}

/** Why an execution's signal fired. */
class AbortReason extends Error {
  constructor(readonly kind: 'timeout' | 'cancel', message: string) {
    super(message);
  }
}

/**
 * Runs tools: one execution row per call, the tool's AbortSignal for timeout and cancel,
 * throttled progress, output validation, and a conditional terminal write so the first
 * terminal state wins (a late result after a cancel is discarded).
 */
@Injectable()
export class ExecutionRunner {
  private readonly logger = new Logger(ExecutionRunner.name);
  private readonly active = new Map<string, AbortController>();

  constructor(
    private readonly store: ExecutionsStore,
    @Inject(WORKSPACE) private readonly workspace: Workspace,
  ) {}

  async runSync(request: RunRequest): Promise<RunOutcome> {
    const { principal, tool, input, options, requestId } = request;
    const now = new Date();
    const execution: Execution = Object.assign(new Execution(), {
      id: newExecutionId(now.getTime()),
      account_id: principal.accountId,
      key_id: principal.keyId,
      tool_id: tool.definition.id,
      tool_version: tool.definition.version,
      status: 'running',
      mode: 'sync',
      progress: 0,
      progress_message: null,
      input: redactSecrets(tool, input),
      result: null,
      error: null,
      request_id: requestId,
      created_at: now,
      started_at: now,
      completed_at: null,
      duration_ms: null,
    });
    await this.store.insert(execution);
    const timeoutSeconds = options.timeout ?? tool.definition.timeout;
    const started = performance.now();
    const fields = await this.execute(execution.id, tool, input, timeoutSeconds);
    const executionMs = performance.now() - started;
    return { execution: await this.store.finish(execution.id, fields, execution.started_at), executionMs };
  }

  /** Aborts an execution running in this process; false when it is not here. */
  abort(executionId: string): boolean {
    const controller = this.active.get(executionId);
    controller?.abort(new AbortReason('cancel', 'Execution cancelled'));
    return controller !== undefined;
  }

  private async execute(id: string, tool: RegisteredTool, input: Record<string, unknown>, timeoutSeconds: number): Promise<TerminalFields> {
    const { definition } = tool;
    const controller = new AbortController();
    this.active.set(id, controller);
    const timer = setTimeout(
      () => controller.abort(new AbortReason('timeout', `Tool '${definition.id}' did not finish within ${timeoutSeconds}s`)),
      timeoutSeconds * 1000,
    );
    const progress = new ProgressThrottle(PROGRESS_INTERVAL_MS, (percent, message) => {
      this.store.recordProgress(id, percent, message).catch((err: unknown) => this.logger.warn(`progress of ${id} not saved: ${(err as Error).message}`));
    });
    const logger = toolLogger(new Logger(`tool:${definition.id}`), id);
    try {
      const run = tool.handler.execute(input, {
        executionId: id,
        signal: controller.signal,
        progress: (percent, message) => progress.report(percent, message),
        logger,
        config: tool.config,
        workspace: this.workspace,
      });
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
      return this.failure(id, definition.id, controller.signal, err);
    } finally {
      clearTimeout(timer);
      progress.stop();
      this.active.delete(id);
    }
  }

  private failure(id: string, toolId: string, signal: AbortSignal, err: unknown): TerminalFields {
    const reason = signal.aborted ? signal.reason : null;
    if (reason instanceof AbortReason) {
      if (reason.kind === 'cancel') return terminal('cancelled', null, null);
      return terminal('error', null, { code: 'TOOL_TIMEOUT', message: reason.message, retryable: true, suggestion: 'Retry with a larger timeout (at most 300 seconds)' });
    }
    if (err instanceof ToolError) {
      return terminal('error', null, {
        code: err.code,
        message: err.message,
        retryable: err.retryable,
        ...(err.details && { details: err.details }),
        ...(err.suggestion && { suggestion: err.suggestion }),
      });
    }
    this.logger.error(`Tool '${toolId}' failed unexpectedly in ${id}: ${(err as Error)?.stack ?? String(err)}`);
    return terminal('error', null, { code: 'TOOL_ERROR', message: `Tool '${toolId}' failed unexpectedly`, retryable: false });
  }
}

function terminal(status: TerminalFields['status'], result: Record<string, unknown> | null, error: ErrorBody | null): TerminalFields {
  return { status, result, error, completed_at: new Date() };
}

function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/** Stored inputs never hold credentials (DESIGN §6). */
function redactSecrets(tool: RegisteredTool, input: Record<string, unknown>): Record<string, unknown> {
  const secretNames = Object.entries(tool.definition.inputs).filter(([, d]) => d.secret).map(([name]) => name);
  if (secretNames.length === 0) return input;
  return { ...input, ...Object.fromEntries(secretNames.filter((n) => n in input).map((n) => [n, '[REDACTED]'])) };
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

