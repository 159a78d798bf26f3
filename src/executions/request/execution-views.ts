import { iso } from '../../keys/key-view';
import type { Execution } from '../engine/execution.entity';
import type { InputRequest } from '../../tools/sdk';

/** A list entry of GET /v1/executions. */
export function executionSummary(e: Execution) {
  return {
    id: e.id,
    tool_id: e.tool_id,
    status: e.status,
    progress: e.progress,
    created_at: iso(e.created_at),
    started_at: iso(e.started_at),
    completed_at: iso(e.completed_at),
    duration_ms: e.duration_ms,
  };
}

/** The questions an execution in `input_required` still waits on (asked, not yet answered), by key. */
export function pendingInputRequests(e: Execution): Record<string, InputRequest> {
  const answered = e.input_responses ?? {};
  return Object.fromEntries(Object.entries(e.input_requests ?? {}).filter(([key]) => !Object.hasOwn(answered, key)));
}

/** GET /v1/executions/{id}: the summary with result or error, input and progress message. */
export function executionView(e: Execution) {
  return {
    ...executionSummary(e),
    tool_version: e.tool_version,
    mode: e.mode,
    kind: e.kind,
    ...(e.parent_execution_id && { parent_execution_id: e.parent_execution_id, step_key: e.step_key }),
    ...(e.progress_message && { progress_message: e.progress_message }),
    input: e.input,
    ...(e.result && { result: e.result }),
    ...(e.error && { error: e.error }),
    ...(e.status === 'input_required' && { input_requests: pendingInputRequests(e) }),
    // What started it other than a caller (docs/orchestration.md).
    ...(e.schedule_id && { schedule_id: e.schedule_id }),
    ...(e.trigger_id && { trigger_id: e.trigger_id }),
    // The upstream task it runs as (docs/upstreams.md#upstream-tasks).
    ...(e.upstream_task && { upstream_task: e.upstream_task }),
  };
}
