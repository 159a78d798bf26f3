import { Injectable } from '@nestjs/common';
import { AppException } from '../common/errors';
import type { Principal } from '../identity/principal';
import { WorkflowRuns } from '../workflows/workflow-runs';
import { WorkflowsService } from '../workflows/workflows.service';
import type { Launch } from './target-launcher';

/**
 * Workflow targets (docs/orchestration.md): named by id or name, kept as the id, so a workflow
 * renamed later, or another one given the old name, does not change what a schedule or trigger
 * starts. Each launch is a run through WorkflowRuns, as `POST /v1/workflows/{id}/runs?async=true`
 * with the same key would start it; its steps are admitted one by one as that key's calls.
 */
@Injectable()
export class WorkflowTargets {
  constructor(
    private readonly workflows: WorkflowsService,
    private readonly runs: WorkflowRuns,
  ) {}

  /** The workflow's id; refuses one the key cannot run and `inputs` (when they are the whole input) it would refuse. */
  async resolve(principal: Principal, idOrName: string, inputs: Record<string, unknown> | null, parameter: string): Promise<string> {
    const workflow = await this.workflows.byIdOrName(principal.accountId, idOrName);
    if (!workflow) throw AppException.invalidRequest(`Unknown workflow: ${idOrName}`, { parameter });
    if (inputs !== null) this.runs.validInputs(workflow.document, inputs);
    return workflow.id;
  }

  /** Starts a run at the workflow's current version, its execution the origin's (id, schedule_id, trigger_id). */
  async launch({ principal, target, inputs, origin }: Launch): Promise<void> {
    await this.runs.start(principal, target.id, inputs, { executionId: origin.executionId, scheduleId: origin.scheduleId, triggerId: origin.triggerId });
  }
}
