import { iso } from '../keys/key-view';
import type { Workflow, WorkflowVersion } from './workflow.entity';
import { WORKFLOW_TOOL_PREFIX } from './workflows.service';

/** A list entry of GET /v1/workflows. */
export function workflowSummary(w: Workflow) {
  return {
    id: w.id,
    name: w.name,
    tool_id: `${WORKFLOW_TOOL_PREFIX}${w.name}`,
    version: w.version,
    publish: w.publish,
    ...(w.document.description !== undefined && { description: w.document.description }),
    steps: w.document.steps.length,
    created_at: iso(w.created_at),
    updated_at: iso(w.updated_at),
  };
}

/** GET /v1/workflows/{id}: the summary and the document at its current version. */
export function workflowView(w: Workflow) {
  return { ...workflowSummary(w), document: w.document };
}

export function workflowVersionView(v: WorkflowVersion) {
  return { workflow_id: v.workflow_id, version: v.version, created_at: iso(v.created_at), document: v.document };
}
