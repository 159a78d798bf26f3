import { Injectable } from '@nestjs/common';
import { canUseTool, type Principal } from '../identity/principal';
import type { AccountTool } from '../tools/account-tools';
import type { InvokeQuery } from '../executions/request/invoke-request';
import { inputsSchema, type WorkflowDocument } from './workflow-document';
import { WorkflowRuns, type RunAnswer } from './workflow-runs';
import type { Workflow } from './workflow.entity';
import { WORKFLOW_TOOL_PREFIX, WorkflowsService } from './workflows.service';

/** How long an account's published workflows are reused between catalogue reads (a change shows within this, in every process). */
const FRESH_MS = 1_000;

/** A workflow's outputs as a JSON schema: each is whatever its expression gives. */
export function outputsSchema(document: Pick<WorkflowDocument, 'outputs'>): Record<string, unknown> {
  const names = Object.keys(document.outputs);
  return { type: 'object', properties: Object.fromEntries(names.map((name) => [name, {}])), ...(names.length > 0 && { required: names }) };
}

/**
 * An account's published workflows as tools of its own catalogue (docs/workflows.md#publishing):
 * `workflow.<name>`, with the workflow's inputs and outputs as schemas, in REST GET /v1/tools and
 * MCP tools/list for that account alone; a key narrowed to some tools sees those it names.
 */
@Injectable()
export class PublishedWorkflows {
  private readonly recent = new Map<string, { at: number; workflows: Workflow[] }>();

  constructor(
    private readonly workflows: WorkflowsService,
    private readonly runs: WorkflowRuns,
  ) {}

  /** The account's published workflows the key may use. */
  async published(principal: Principal): Promise<Workflow[]> {
    const now = Date.now();
    let entry = this.recent.get(principal.accountId);
    if (!entry || now - entry.at > FRESH_MS) {
      if (this.recent.size > 10_000) this.recent.clear();
      entry = { at: now, workflows: await this.workflows.published(principal.accountId) };
      this.recent.set(principal.accountId, entry);
    }
    return entry.workflows.filter((workflow) => canUseTool(principal, toolIdOf(workflow)));
  }

  /** A published workflow by its tool id, or undefined. */
  async byToolId(principal: Principal, toolId: string): Promise<Workflow | undefined> {
    if (!toolId.startsWith(WORKFLOW_TOOL_PREFIX) || !canUseTool(principal, toolId)) return undefined;
    const workflow = await this.workflows.byName(principal.accountId, toolId.slice(WORKFLOW_TOOL_PREFIX.length));
    return workflow?.publish ? workflow : undefined;
  }

  async of(principal: Principal): Promise<AccountTool[]> {
    return (await this.published(principal)).map(toolView);
  }

  async invoke(principal: Principal, toolId: string, body: unknown, query: InvokeQuery, requestId: string): Promise<RunAnswer | undefined> {
    const workflow = await this.byToolId(principal, toolId);
    return workflow && this.runs.request(principal, workflow, body, query, requestId);
  }
}

export function toolIdOf(workflow: Pick<Workflow, 'name'>): string {
  return `${WORKFLOW_TOOL_PREFIX}${workflow.name}`;
}

function description(workflow: Workflow): string {
  return workflow.document.description ?? `Runs the workflow '${workflow.name}' (${workflow.document.steps.length} steps)`;
}

function toolView(workflow: Workflow): AccountTool {
  const { document } = workflow;
  const required = new Set((inputsSchema(document).required as string[] | undefined) ?? []);
  const inputs = Object.fromEntries(Object.entries(document.inputs).map(([name, { required: _, ...input }]) => [name, { ...input, required: required.has(name) }]));
  const outputs = Object.fromEntries(Object.keys(document.outputs).map((name) => [name, { type: 'any' }]));
  const summary = {
    id: toolIdOf(workflow),
    name: workflow.name,
    category: 'automation',
    description: description(workflow),
    status: 'ready',
    version: String(workflow.version),
    kind: 'workflow',
    workflow_id: workflow.id,
    inputs,
    outputs,
    timeout: `${document.timeout}s`,
    cacheable: false,
  };
  const typeNames = (members: Record<string, { type?: unknown }>) => Object.fromEntries(Object.entries(members).map(([name, member]) => [name, member.type ?? 'any']));
  return {
    id: summary.id,
    name: workflow.name,
    description: summary.description,
    summary,
    compact: { ...summary, inputs: typeNames(inputs), outputs: typeNames(outputs) },
    detail: { ...summary, input_schema: inputsSchema(document), output_schema: outputsSchema(document), document },
  };
}
