/** Execution rows and bus events as the events of GET /v1/ws (docs/executions.md#live-updates-over-websocket). */
import { iso } from '../../keys/key-view';
import type { Execution } from '../engine/execution.entity';
import { TERMINAL_STATUSES } from '../engine/execution.entity';
import { pendingInputRequests } from '../request/execution-views';

/** The event names, the same as the webhook events where they overlap (SPEC §6.3). */
export const LIVE_EVENT_NAMES = [
  'execution.status',
  'execution.progress',
  'execution.input_required',
  'execution.completed',
  'execution.failed',
  'execution.cancelled',
] as const;
export type LiveEventName = (typeof LIVE_EVENT_NAMES)[number];

/** Whose an execution is: what visibility and subscriptions are checked against. */
export interface ExecutionOwner {
  account_id: string;
  tool_id: string;
}

/** An event before a socket numbers it; `state` (`status:progress`) lets each socket skip repeats. */
export interface LiveEvent {
  owner: ExecutionOwner;
  state: string;
  /** The execution ended: nothing of it follows this event. */
  final: boolean;
  event: LiveEventName;
  data: Record<string, unknown>;
}

const ENDED: Record<string, LiveEventName> = { success: 'execution.completed', error: 'execution.failed', cancelled: 'execution.cancelled' };

/** The execution's current state as one event: its end (with result or error), its questions, or its status. */
export function stateEvent(e: Execution): LiveEvent {
  const base = { execution_id: e.id, tool_id: e.tool_id, status: e.status, progress: e.progress };
  const owner = { account_id: e.account_id, tool_id: e.tool_id };
  const state = `${e.status}:${e.progress}`;
  if (TERMINAL_STATUSES.has(e.status)) {
    const data = { ...base, ...(e.result && { result: e.result }), ...(e.error && { error: e.error }), completed_at: iso(e.completed_at), duration_ms: e.duration_ms };
    return { owner, state, final: true, event: ENDED[e.status], data };
  }
  if (e.status === 'input_required') return { owner, state, final: false, event: 'execution.input_required', data: { ...base, input_requests: pendingInputRequests(e) } };
  return { owner, state, final: false, event: 'execution.status', data: base };
}

/** A progress report: it carries no status (the last status event's holds). */
export function progressEvent(owner: ExecutionOwner, executionId: string, progress: number, message: string | null): LiveEvent {
  return { owner, state: `running:${progress}`, final: false, event: 'execution.progress', data: { execution_id: executionId, tool_id: owner.tool_id, progress, message } };
}
