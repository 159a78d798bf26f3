import type { Execution } from '../executions/engine/execution.entity';
import { runGraphView } from './run-graph';
import { readDocument } from './workflow-document';
import type { WorkflowRun } from './workflow.entity';

const { document } = readDocument({
  name: 'fan-out',
  steps: [
    { id: 'scan', tool: 't', retry: { attempts: 2, backoff: 0, on: ['TOOL_ERROR'] } },
    { id: 'each', tool: 't', needs: ['scan'], for_each: '[1, 2]' },
    { id: 'note', tool: 't', needs: ['each'], if: 'false' },
  ],
});

const execution = (id: string, fields: Partial<Execution>) => ({ id, progress: 0, duration_ms: null, result: null, error: null, completed_at: null, created_at: new Date(0), ...fields }) as Execution;
const run = execution('exec_run', { kind: 'workflow', tool_id: 'workflow.fan-out', status: 'running', step_key: null });
const row = { workflow_id: 'wf_1', version: 3, document, state: { skipped: ['note'], items: { each: 2 }, failed: {} } } as unknown as WorkflowRun;

describe('runGraphView', () => {
  it('gives each step its edges, its status as the planner reads it, and its calls: retries and for_each items under their step', () => {
    const calls = [
      execution('exec_1', { step_key: 'scan', status: 'error', error: { code: 'TOOL_ERROR', message: 'flaky', retryable: true } }),
      execution('exec_2', { step_key: 'scan#2', status: 'success', result: { ok: true } }),
      execution('exec_3', { step_key: 'each[0]', status: 'success', result: { n: 1 } }),
      execution('exec_4', { step_key: 'each[1]', status: 'running' }),
    ];
    const graph = runGraphView(run, row, calls, 0);
    expect(graph).toMatchObject({ workflow_id: 'wf_1', version: 3, run: { id: 'exec_run', kind: 'workflow' } });
    expect(graph.steps.map(({ id, needs, status }) => ({ id, needs, status }))).toEqual([
      { id: 'scan', needs: [], status: 'success' },
      { id: 'each', needs: ['scan'], status: 'running' },
      { id: 'note', needs: ['each'], status: 'skipped' },
    ]);
    expect(graph.steps[0].calls.map((c) => [c.step_key, c.status])).toEqual([['scan', 'error'], ['scan#2', 'success']]);
    expect(graph.steps[1].calls.map((c) => c.execution_id)).toEqual(['exec_3', 'exec_4']);
    expect(graph.steps[1]).toMatchObject({ for_each: '[1, 2]' });
    expect(graph.steps[2]).toMatchObject({ if: 'false', calls: [] });
  });
});
