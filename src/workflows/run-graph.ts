import { Injectable } from '@nestjs/common';
import { AppException } from '../common/errors';
import type { Principal } from '../identity/principal';
import type { Execution } from '../executions/engine/execution.entity';
import { ExecutionsStore } from '../executions/engine/executions.store';
import { executionView } from '../executions/request/execution-views';
import { parseUnitKey, planRun, type StepExecution } from './run-plan';
import { RunStore } from './run-store';
import type { WorkflowRun } from './workflow.entity';

/** One call of a step (an item of a for_each, an attempt of a retry), as the graph lists it. */
function callView(call: Execution) {
  return { execution_id: call.id, step_key: call.step_key, status: call.status, progress: call.progress, duration_ms: call.duration_ms };
}

/**
 * A run as a DAG (docs/workflows.md#a-runs-graph): the steps of the document it is pinned to, with
 * `needs` as edges, each step's status as the planner reads it (the one `steps.<id>.status` gives)
 * and its calls.
 */
export function runGraphView(run: Execution, row: WorkflowRun, calls: readonly Execution[], now: number) {
  const units = calls.filter((call): call is Execution & StepExecution => call.step_key !== null);
  const plan = planRun(row.document, units, row.state, now);
  const callsOf = new Map<string, Execution[]>();
  for (const call of units) {
    const stepId = parseUnitKey(call.step_key)?.stepId;
    if (stepId !== undefined) callsOf.set(stepId, [...(callsOf.get(stepId) ?? []), call]);
  }
  return {
    run: executionView(run),
    workflow_id: row.workflow_id,
    version: row.version,
    steps: row.document.steps.map((step) => {
      const view = plan.steps[step.id];
      return {
        id: step.id,
        tool: step.tool,
        needs: step.needs,
        ...(step.if !== undefined && { if: step.if }),
        ...(step.for_each !== undefined && { for_each: step.for_each }),
        continue_on_error: step.continue_on_error,
        status: view.status,
        ...(view.error && { error: view.error }),
        calls: (callsOf.get(step.id) ?? []).map(callView),
      };
    }),
  };
}

export type RunGraph = ReturnType<typeof runGraphView>;

/** Reads a run's graph for a caller who may read the run's execution (its account, a tool its key may use). */
@Injectable()
export class RunGraphs {
  constructor(
    private readonly executions: ExecutionsStore,
    private readonly runs: RunStore,
  ) {}

  async get(principal: Principal, runId: string): Promise<RunGraph> {
    const run = await this.executions.get(principal, runId);
    const row = run.kind === 'workflow' ? await this.runs.find(run.id) : null;
    if (!row) throw new AppException('NOT_FOUND', `Execution ${runId} is not a workflow run`);
    return runGraphView(run, row, await this.executions.children(run.id), Date.now());
  }
}
