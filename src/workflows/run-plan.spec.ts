import type { ErrorBody } from '../common/errors';
import { NEW_RUN_STATE, parseUnitKey, planRun, retryAt, unitKey, type StepExecution } from './run-plan';
import { readDocument, type WorkflowDocument } from './workflow-document';

const documentOf = (raw: Record<string, unknown>): WorkflowDocument => {
  const { document, problems } = readDocument(raw);
  expect(problems).toEqual([]);
  return document!;
};

const DIAMOND = documentOf({
  name: 'diamond',
  concurrency: 2,
  steps: [
    { id: 'a', tool: 't' },
    { id: 'b', tool: 't', needs: ['a'] },
    { id: 'c', tool: 't', needs: ['a'] },
    { id: 'd', tool: 't', needs: ['b', 'c'] },
  ],
});

let ids = 0;
const call = (step_key: string, status: StepExecution['status'], extra: Partial<StepExecution> = {}): StepExecution => ({
  id: `exec_${++ids}`,
  step_key,
  status,
  result: status === 'success' ? { value: step_key } : null,
  error: null,
  completed_at: ['success', 'error', 'cancelled'].includes(status) ? new Date(1_000) : null,
  ...extra,
});
const failure: ErrorBody = { code: 'TOOL_ERROR', message: 'upstream 503', retryable: true };

describe('planRun', () => {
  it('readies only the steps whose needs have all ended, and ends the run when every step has', () => {
    expect(planRun(DIAMOND, [], NEW_RUN_STATE, 0).ready.map((s) => s.id)).toEqual(['a']);
    const afterA = planRun(DIAMOND, [call('a', 'success')], NEW_RUN_STATE, 0);
    expect(afterA.ready.map((s) => s.id)).toEqual(['b', 'c']);
    expect(afterA.progress).toBe(25);
    const bRunning = planRun(DIAMOND, [call('a', 'success'), call('b', 'running'), call('c', 'success')], NEW_RUN_STATE, 0);
    expect(bRunning.ready).toEqual([]);
    expect(bRunning.active.map((e) => e.step_key)).toEqual(['b']);
    const done = planRun(DIAMOND, ['a', 'b', 'c', 'd'].map((k) => call(k, 'success')), NEW_RUN_STATE, 0);
    expect(done).toMatchObject({ complete: true, progress: 100, ready: [], due: [] });
    expect(done.steps.d).toEqual({ status: 'success', result: { value: 'd' }, error: null });
  });

  it('treats a skipped step as ended: its dependants run', () => {
    const plan = planRun(DIAMOND, [call('a', 'success'), call('c', 'success')], { ...NEW_RUN_STATE, skipped: ['b'] }, 0);
    expect(plan.steps.b.status).toBe('skipped');
    expect(plan.ready.map((s) => s.id)).toEqual(['d']);
  });

  it('fails the run on an error without continue_on_error, naming the step and the call', () => {
    const a = call('a', 'error', { error: { code: 'INVALID_INPUT', message: 'bad', retryable: false } });
    expect(planRun(DIAMOND, [a], NEW_RUN_STATE, 0).failed).toEqual({ step: 'a', error: { code: 'INVALID_INPUT', message: 'bad', retryable: false, details: { step: 'a', execution_id: a.id } } });
    const lenient = documentOf({ name: 'x', steps: [{ id: 'a', tool: 't', continue_on_error: true }, { id: 'b', tool: 't', needs: ['a'] }] });
    const plan = planRun(lenient, [a], NEW_RUN_STATE, 0);
    expect(plan.failed).toBeUndefined();
    expect(plan.steps.a.status).toBe('error');
    expect(plan.ready.map((s) => s.id)).toEqual(['b']);
  });

  it('retries after the backoff (doubling) when the code is named, and not after the last attempt', () => {
    const retried = documentOf({ name: 'x', steps: [{ id: 'a', tool: 't', retry: { attempts: 3, backoff: 2, on: ['TOOL_ERROR'] } }] });
    const first = [call('a', 'error', { error: failure, completed_at: new Date(10_000) })];
    const waiting = planRun(retried, first, NEW_RUN_STATE, 11_000);
    expect(waiting).toMatchObject({ due: [], nextRetryAt: 12_000 });
    expect(waiting.failed).toBeUndefined();
    expect(planRun(retried, first, NEW_RUN_STATE, 12_000).due.map((u) => u.key)).toEqual(['a#2']);
    const second = [...first, call('a#2', 'error', { error: failure, completed_at: new Date(20_000) })];
    expect(retryAt(retried.steps[0], 2, new Date(20_000))).toBe(24_000);
    expect(planRun(retried, second, NEW_RUN_STATE, 24_000).due.map((u) => u.key)).toEqual(['a#3']);
    const third = [...second, call('a#3', 'error', { error: failure })];
    expect(planRun(retried, third, NEW_RUN_STATE, 99_000).failed?.step).toBe('a');
    const other = [call('a', 'error', { error: { code: 'INVALID_INPUT', message: 'no', retryable: true } })];
    expect(planRun(retried, other, NEW_RUN_STATE, 99_000).failed?.step).toBe('a');
    const success = [...first, call('a#2', 'success')];
    expect(planRun(retried, success, NEW_RUN_STATE, 0)).toMatchObject({ complete: true, steps: { a: { status: 'success', result: { value: 'a#2' } } } });
  });

  it('fans a for_each out item by item, and gathers the results in order', () => {
    const fan = documentOf({ name: 'x', steps: [{ id: 'each', tool: 't', for_each: '${{ inputs.items }}' }] });
    expect(planRun(fan, [], NEW_RUN_STATE, 0).ready.map((s) => s.id)).toEqual(['each']);
    const state = { ...NEW_RUN_STATE, items: { each: 3 } };
    const started = planRun(fan, [call('each[1]', 'running')], state, 0);
    expect(started.ready).toEqual([]);
    expect(started.due.map((u) => u.key)).toEqual(['each[0]', 'each[2]']);
    const done = planRun(fan, [call('each[0]', 'success'), call('each[1]', 'success'), call('each[2]', 'success')], state, 0);
    expect(done.steps.each.result).toEqual([{ value: 'each[0]' }, { value: 'each[1]' }, { value: 'each[2]' }]);
    expect(planRun(fan, [], { ...NEW_RUN_STATE, items: { each: 0 } }, 0)).toMatchObject({ complete: true, steps: { each: { status: 'success', result: [] } } });
  });

  it('reports a step waiting for its caller', () => {
    const asking = call('a', 'input_required');
    expect(planRun(DIAMOND, [asking], NEW_RUN_STATE, 0)).toMatchObject({ asking, steps: { a: { status: 'input_required' } } });
  });

  it('keys calls by step, item and attempt, and reads the keys back', () => {
    expect([unitKey('scan', undefined, 1), unitKey('scan', 2, 1), unitKey('scan', 2, 3)]).toEqual(['scan', 'scan[2]', 'scan[2]#3']);
    expect(parseUnitKey('scan[2]#3')).toEqual({ stepId: 'scan', index: 2, attempt: 3 });
    expect(parseUnitKey('scan')).toEqual({ stepId: 'scan', attempt: 1 });
    expect(parseUnitKey('not a key')).toBeUndefined();
  });
});
