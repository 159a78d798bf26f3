import type { ErrorBody } from '../common/errors';
import type { ExecutionStatus } from '../executions/engine/execution.entity';
import type { WorkflowDocument, WorkflowStep } from './workflow-document';

/** What a run decided that its steps' executions cannot tell: steps skipped by `if`, and each for_each step's item count. */
export interface RunState {
  skipped: string[];
  items: Record<string, number>;
  /** Steps that failed before any call of theirs could start (their `if` or `for_each` did not evaluate). */
  failed: Record<string, ErrorBody>;
}

export const NEW_RUN_STATE: RunState = { skipped: [], items: {}, failed: {} };

/** A step's execution as the plan reads it. */
export interface StepExecution {
  id: string;
  step_key: string;
  status: ExecutionStatus;
  result: Record<string, unknown> | null;
  error: ErrorBody | null;
  completed_at: Date | null;
}

/** One call of a step: its item (for_each) and attempt (retry). Its key is unique within the run, so it starts once. */
export interface StepUnit {
  step: WorkflowStep;
  index?: number;
  attempt: number;
  key: string;
}

export type StepStatus = 'pending' | 'running' | 'input_required' | 'success' | 'error' | 'skipped';

/** A step as expressions read it: `steps.<id>.result`, `.status`, `.error`. */
export interface StepView {
  status: StepStatus;
  result: unknown;
  error: ErrorBody | null;
}

export interface RunPlan {
  steps: Record<string, StepView>;
  /** Calls to start now, in order (retries due, the next items of a started for_each). */
  due: StepUnit[];
  /** Steps whose needs have all ended and that have not begun: their `if` and `for_each` are read next. */
  ready: WorkflowStep[];
  /** Calls running or waiting (they hold the run's concurrency). */
  active: StepExecution[];
  /** A step waiting for its caller's answers. */
  asking?: StepExecution;
  /** Epoch ms of the earliest retry not yet due. */
  nextRetryAt?: number;
  /** The step that failed the run (an error without continue_on_error), and its error. */
  failed?: { step: string; error: ErrorBody };
  /** Every step has ended. */
  complete: boolean;
  /** Share of steps ended, 0..100. */
  progress: number;
}

const ACTIVE: ReadonlySet<ExecutionStatus> = new Set(['queued', 'running', 'input_required']);

export function unitKey(stepId: string, index: number | undefined, attempt: number): string {
  return `${stepId}${index === undefined ? '' : `[${index}]`}${attempt > 1 ? `#${attempt}` : ''}`;
}

const KEY = /^([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?(?:#(\d+))?$/;

export function parseUnitKey(key: string): { stepId: string; index?: number; attempt: number } | undefined {
  const match = KEY.exec(key);
  if (!match) return undefined;
  return { stepId: match[1], ...(match[2] !== undefined && { index: Number(match[2]) }), attempt: match[3] === undefined ? 1 : Number(match[3]) };
}

/** Whether a failed attempt gets another: attempts left, and its code named in `on` (or, with no `on`, an error marked retryable). */
export function retries(step: WorkflowStep, attempt: number, error: ErrorBody | null): boolean {
  const policy = step.retry;
  if (!policy || attempt >= policy.attempts || !error) return false;
  return policy.on.length > 0 ? policy.on.includes(error.code) : error.retryable === true;
}

/** When the attempt after `attempt` may start: `backoff` seconds after the first failure, doubling. */
export function retryAt(step: WorkflowStep, attempt: number, failedAt: Date): number {
  return failedAt.getTime() + (step.retry?.backoff ?? 0) * 1000 * 2 ** (attempt - 1);
}

/**
 * The DAG scheduler, a function of what is stored: the document, the run's decisions, and its
 * steps' executions. It says which calls start now, which steps are ready to be read, and whether
 * the run has ended; the engine (workflow-engine.ts) does the starting. Because it reads only
 * stored state, any process can take a run over after another died, and nothing that succeeded
 * is started again (a call's key names its step, item and attempt).
 */
export function planRun(document: WorkflowDocument, executions: readonly StepExecution[], state: RunState, now: number): RunPlan {
  const attemptsOf = new Map<string, StepExecution[]>();
  for (const execution of executions) {
    const parsed = parseUnitKey(execution.step_key);
    if (!parsed) continue;
    const unit = unitKey(parsed.stepId, parsed.index, 1);
    const list = attemptsOf.get(unit) ?? [];
    list[parsed.attempt - 1] = execution;
    attemptsOf.set(unit, list);
  }
  const plan: RunPlan = { steps: {}, due: [], ready: [], active: [], complete: false, progress: 0 };
  const skipped = new Set(state.skipped);
  let ended = 0;
  for (const step of document.steps) {
    const view = stepView(step, skipped, state, attemptsOf, plan, now);
    plan.steps[step.id] = view;
    if (view.status === 'success' || view.status === 'error' || view.status === 'skipped') ended++;
    if (view.status === 'error' && !step.continue_on_error && !plan.failed) plan.failed = { step: step.id, error: view.error! };
  }
  for (const step of document.steps) {
    const begun = skipped.has(step.id) || state.failed[step.id] !== undefined || state.items[step.id] !== undefined || attemptsOf.has(unitKey(step.id, undefined, 1));
    if (!begun && step.needs.every((need) => isEnded(plan.steps[need].status))) plan.ready.push(step);
  }
  plan.complete = ended === document.steps.length;
  plan.progress = Math.floor((ended / document.steps.length) * 100);
  return plan;
}

function isEnded(status: StepStatus): boolean {
  return status === 'success' || status === 'error' || status === 'skipped';
}

function stepView(step: WorkflowStep, skipped: Set<string>, state: RunState, attemptsOf: Map<string, StepExecution[]>, plan: RunPlan, now: number): StepView {
  if (skipped.has(step.id)) return { status: 'skipped', result: null, error: null };
  const failure = state.failed[step.id];
  if (failure) return { status: 'error', result: null, error: { ...failure, details: { ...failure.details, step: step.id } } };
  const count = step.for_each === undefined ? 1 : state.items[step.id];
  if (count === undefined) return { status: 'pending', result: null, error: null };
  const indexes = step.for_each === undefined ? [undefined] : Array.from({ length: count }, (_, i) => i);
  const results: unknown[] = [];
  let status = 'success' as StepStatus;
  let error: ErrorBody | null = null;
  // A failure ends a step at once unless it continues on error: then its other items finish first.
  const rank: Record<StepStatus, number> = { success: 0, skipped: 0, error: step.continue_on_error ? 0.5 : 4, pending: 1, running: 2, input_required: 3 };
  const worse = (next: StepStatus) => {
    if (rank[next] > rank[status]) status = next;
  };
  for (const index of indexes) {
    const attempts = attemptsOf.get(unitKey(step.id, index, 1)) ?? [];
    const latest = attempts[attempts.length - 1];
    const attempt = attempts.length;
    if (!latest) {
      // Only items of a started for_each come here; a step not begun is `ready` instead.
      if (step.for_each !== undefined) plan.due.push({ step, index, attempt: 1, key: unitKey(step.id, index, 1) });
      worse('pending');
      results.push(null);
      continue;
    }
    if (ACTIVE.has(latest.status)) {
      plan.active.push(latest);
      if (latest.status === 'input_required') plan.asking ??= latest;
      worse(latest.status === 'input_required' ? 'input_required' : 'running');
      results.push(null);
      continue;
    }
    if (latest.status === 'success') {
      results.push(latest.result);
      continue;
    }
    const failure = latest.error ?? { code: 'CONFLICT', message: `Step '${step.id}' was cancelled`, retryable: false };
    if (latest.status === 'error' && retries(step, attempt, latest.error)) {
      const at = retryAt(step, attempt, latest.completed_at ?? new Date(now));
      if (at <= now) plan.due.push({ step, index, attempt: attempt + 1, key: unitKey(step.id, index, attempt + 1) });
      else plan.nextRetryAt = Math.min(plan.nextRetryAt ?? Infinity, at);
      worse('pending');
      results.push(null);
      continue;
    }
    error ??= { ...failure, details: { ...failure.details, step: step.id, ...(index !== undefined && { item: index }), execution_id: latest.id } };
    worse('error');
    results.push(null);
  }
  const result = step.for_each === undefined ? results[0] : results;
  return { status, result: status === 'success' || status === 'error' ? result : null, error: status === 'error' ? error : null };
}
