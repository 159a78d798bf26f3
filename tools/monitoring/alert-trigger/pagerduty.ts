/** PagerDuty Events API v2 (`POST /v2/enqueue`) through ctx.http. */
import { ToolError, type ToolContext } from '@tos/sdk';

export type EventAction = 'trigger' | 'acknowledge' | 'resolve';

export interface PagerDutyEvent {
  routing_key: string;
  event_action: EventAction;
  dedup_key?: string;
  /** Trigger only. */
  payload?: {
    summary: string;
    source: string;
    severity: 'critical' | 'error' | 'warning' | 'info';
    timestamp?: string;
    class?: string;
    custom_details?: Record<string, unknown>;
  };
  client?: string;
  client_url?: string;
}

export interface PagerDutyAnswer {
  status: string;
  message: string;
  dedup_key: string;
}

export async function sendEvent(ctx: ToolContext, eventsUrl: string, event: PagerDutyEvent, timeoutMs: number): Promise<PagerDutyAnswer> {
  // The URL is the operator's setting, never an input: the routing key must not go anywhere else.
  const response = await ctx.http.request(eventsUrl, { method: 'POST', json: event, timeoutMs, parameter: 'PAGERDUTY_EVENTS_URL' });
  if (response.status === 202 || response.status === 200) return response.json<PagerDutyAnswer>();
  const answer = safeJson(response.text());
  const reason = [answer?.message, ...(answer?.errors ?? [])].filter(Boolean).join('; ');
  throw ToolError.fromResponse('pagerduty', response, `PagerDuty answered HTTP ${response.status}${reason ? `: ${reason}` : ''}`);
}

function safeJson(body: string): { message?: string; errors?: string[] } | undefined {
  try {
    return JSON.parse(body) as { message?: string; errors?: string[] };
  } catch {
    return undefined;
  }
}
