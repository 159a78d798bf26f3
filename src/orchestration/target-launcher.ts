import { Injectable } from '@nestjs/common';
import { AppException } from '../common/errors';
import type { ExecutionOrigin } from '../executions/engine/execution-runner';
import { InvocationService } from '../executions/request/invocation.service';
import { canUseTool, type Principal } from '../identity/principal';
import { KnownTools } from '../tools/known-tools';
import { WorkflowTargets } from './workflow-targets';

export const TARGET_KINDS = ['tool', 'workflow'] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

/** What a schedule or a trigger starts: a tool or a workflow, by id (a workflow named by name at creation is kept as its id). */
export interface Target {
  kind: TargetKind;
  id: string;
}

/** One start of a target, as the key that created the schedule or trigger. */
export interface Launch {
  principal: Principal;
  target: Target;
  inputs: Record<string, unknown>;
  origin: ExecutionOrigin;
}

/**
 * Starts the target of a schedule's tick or a trigger's event. A tool target is an async call
 * through InvocationService.submit, so admission (scopes, the key's tools, the tool window, the
 * monthly quota) applies exactly as to an invoke; a workflow target is a run (WorkflowTargets).
 */
@Injectable()
export class TargetLauncher {
  constructor(
    private readonly knownTools: KnownTools,
    private readonly invocations: InvocationService,
    private readonly workflows: WorkflowTargets,
  ) {}

  /**
   * At creation: the target exists and the key may start it; `inputs`, when they are the whole
   * input (no mapping adds to them), are valid for it. `parameter` names the request member at fault.
   * Answers the target as it is kept.
   */
  async check(principal: Principal, target: Target, inputs: Record<string, unknown> | null, parameter: string): Promise<Target> {
    if (target.kind === 'workflow') {
      this.mayInvoke(principal);
      return { kind: 'workflow', id: await this.workflows.resolve(principal, target.id, inputs, `${parameter}.workflow`) };
    }
    this.permitted(principal, target.id);
    const tool = await this.knownTools.find(principal.accountId, target.id);
    if (!tool) throw AppException.invalidRequest(`Unknown tool: ${target.id}`, { parameter: `${parameter}.tool` });
    if (inputs !== null) tool.validateInput(structuredClone(inputs));
    return target;
  }

  /** Starts it; throws an AppException when admission or validation refuses. */
  async launch(launch: Launch): Promise<void> {
    const { principal, target, inputs, origin } = launch;
    if (target.kind === 'workflow') {
      this.mayInvoke(principal);
      return this.workflows.launch(launch);
    }
    this.permitted(principal, target.id);
    const tool = await this.knownTools.find(principal.accountId, target.id);
    if (!tool) throw AppException.notFound('Tool', target.id);
    const input = tool.validateInput(structuredClone(inputs));
    await this.invocations.submit({ principal, tool, input, options: { async: true, cache: false }, requestId: null, origin });
  }

  private permitted(principal: Principal, toolId: string): void {
    this.mayInvoke(principal);
    if (!canUseTool(principal, toolId)) throw new AppException('FORBIDDEN', `The key may not use the tool ${toolId}`, { details: { tool_id: toolId } });
  }

  private mayInvoke(principal: Principal): void {
    if (!principal.scopes.has('tools:invoke')) throw new AppException('FORBIDDEN', 'The key lacks the tools:invoke scope', { details: { required_scope: 'tools:invoke' } });
  }
}
