import { Tool, ToolError, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';
import { badLabelName, findAlert, fingerprintOf, postAlert, type PostableAlert } from './alertmanager';
import { sendEvent, type EventAction } from './pagerduty';

type Provider = 'alertmanager' | 'pagerduty';
type Severity = 'critical' | 'error' | 'warning' | 'info';

type AlertTriggerInput = ToolInput<typeof definition>;

type AlertTriggerOutput = ToolOutput<typeof definition>;

const TIME_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2})$';
const DEFAULT_SOURCE = 'tool-orchestration-service';

const definition = defineTool({
  id: 'alert-trigger',
  name: 'Alert Trigger',
  category: 'monitoring',
  description:
    "Fires or resolves an alert. Alertmanager (v2 API): labels (alertname, severity and yours), annotations, startsAt/endsAt, generator URL; the alert is read back and its fingerprint, state and receivers returned. PagerDuty (Events API v2): trigger, acknowledge or resolve with a dedup_key, the routing key from the account's secret PAGERDUTY_ROUTING_KEY (else the service's); returns PagerDuty's dedup_key and message.",
  version: '1.0.0',
  effects: 'write',
  idempotent: false,
  open_world: true,
  timeout: 30,
  rate_limit: 60,
  config: {
    ALERTMANAGER_URL: { type: 'url', description: 'Alertmanager base URL used when the call names none (e.g. http://alertmanager:9093).' },
    PAGERDUTY_EVENTS_URL: { type: 'url', default: 'https://events.pagerduty.com/v2/enqueue', description: 'PagerDuty Events API v2 endpoint (the EU service: https://events.eu.pagerduty.com/v2/enqueue).' },
    PAGERDUTY_ROUTING_KEY: { type: 'string', secret: true, description: "Integration (routing) key of a PagerDuty service; an account's secret of the same name wins." },
  },
  input: {
    type: 'object',
    properties: {
      provider: { type: 'string', enum: ['alertmanager', 'pagerduty'], default: 'alertmanager', description: 'Where the alert goes.' },
      action: { type: 'string', enum: ['trigger', 'resolve', 'acknowledge'], default: 'trigger', description: 'trigger (fire), resolve, or acknowledge (PagerDuty only).' },
      alert_name: { type: 'string', maxLength: 200, description: "The alertname label (Alertmanager, required there); PagerDuty's class, and its summary when summary is omitted." },
      summary: { type: 'string', maxLength: 1024, description: 'One-line summary: the summary annotation (Alertmanager), payload.summary (PagerDuty trigger).' },
      description: { type: 'string', maxLength: 4096, description: 'Longer text: the description annotation (Alertmanager), custom_details.description (PagerDuty).' },
      severity: { type: 'string', enum: ['critical', 'error', 'warning', 'info'], default: 'error', description: 'The severity label (Alertmanager), payload.severity (PagerDuty).' },
      source: { type: 'string', maxLength: 255, default: DEFAULT_SOURCE, description: 'PagerDuty payload.source: the system the problem is on.' },
      labels: {
        type: 'object',
        maxProperties: 30,
        additionalProperties: { type: 'string', maxLength: 1024 },
        description: 'More labels (Alertmanager: they identify the alert, so resolve with the same ones); PagerDuty custom_details.',
      },
      annotations: { type: 'object', maxProperties: 30, additionalProperties: { type: 'string', maxLength: 4096 }, description: 'More annotations (Alertmanager); PagerDuty custom_details.' },
      dedup_key: { type: 'string', minLength: 1, maxLength: 255, description: 'PagerDuty: the incident key (required to acknowledge or resolve; PagerDuty makes one on trigger when omitted). Alertmanager identifies alerts by labels instead.' },
      starts_at: { type: 'string', maxLength: 40, pattern: TIME_PATTERN, description: 'When the problem began (RFC 3339): startsAt (Alertmanager), payload.timestamp (PagerDuty); now when omitted.' },
      ends_at: { type: 'string', maxLength: 40, pattern: TIME_PATTERN, description: "Alertmanager endsAt: when the alert stops firing unless sent again (default: Alertmanager's resolve_timeout); a resolve sets it to now when omitted." },
      generator_url: { type: 'string', maxLength: 2048, pattern: '^https?://', description: 'Link back to what raised the alert: generatorURL (Alertmanager), client_url (PagerDuty).' },
      url: { type: 'string', maxLength: 2048, pattern: '^https?://', description: 'Alertmanager base URL (ALERTMANAGER_URL when omitted). PagerDuty always goes to PAGERDUTY_EVENTS_URL.' },
      timeout_ms: { type: 'integer', minimum: 100, maximum: 25_000, default: 10_000, description: 'Time allowed for each request.' },
    },
  },
  output: {
    type: 'object',
    properties: {
      provider: { type: 'string', enum: ['alertmanager', 'pagerduty'], description: 'Where the alert went.' },
      action: { type: 'string', enum: ['trigger', 'resolve', 'acknowledge'], description: 'What was done.' },
      accepted: { type: 'boolean', description: 'The receiver took the alert (a refusal is an error).' },
      dedup_key: { type: 'string', description: "The alert's identity: Alertmanager's fingerprint of its labels, or PagerDuty's dedup_key." },
      state: { type: ['string', 'null'], description: 'Alertmanager: active, suppressed or unprocessed as it now holds the alert, resolved after a resolve; null for PagerDuty.' },
      starts_at: { type: ['string', 'null'], description: "Alertmanager's startsAt of the alert; null for PagerDuty and after a resolve." },
      ends_at: { type: ['string', 'null'], description: "Alertmanager's endsAt (when it resolves unless sent again); the resolve time after a resolve; null for PagerDuty." },
      receivers: { type: 'array', items: { type: 'string' }, description: 'Alertmanager receivers the alert routes to; empty for PagerDuty and after a resolve.' },
      message: { type: ['string', 'null'], description: "PagerDuty's answer (Event processed); null for Alertmanager." },
    },
    required: ['provider', 'action', 'accepted', 'dedup_key', 'state', 'starts_at', 'ends_at', 'receivers', 'message'],
  },
  examples: [
    {
      name: 'Fire an Alertmanager alert',
      input: { url: 'http://alertmanager.example.test:9093', alert_name: 'DiskAlmostFull', severity: 'warning', summary: 'Disk /var is 91% full', labels: { instance: 'db-1' } },
      output: {
        provider: 'alertmanager',
        action: 'trigger',
        accepted: true,
        dedup_key: 'f48da07b1f22d038',
        state: 'active',
        starts_at: '2026-11-22T19:21:07.694Z',
        ends_at: '2026-11-22T19:26:07.694Z',
        receivers: ['on-call'],
        message: null,
      },
      varies: ['starts_at', 'ends_at'],
    },
    {
      name: 'Trigger a PagerDuty incident',
      input: { provider: 'pagerduty', alert_name: 'CheckoutErrors', summary: 'Checkout error rate above 5%', severity: 'critical', source: 'shop-api', dedup_key: 'shop-checkout-errors' },
      output: { provider: 'pagerduty', action: 'trigger', accepted: true, dedup_key: 'shop-checkout-errors', state: null, starts_at: null, ends_at: null, receivers: [], message: 'Event processed' },
    },
  ],
});

@Tool(definition)
export class AlertTriggerTool implements ToolHandler<typeof definition> {
  async execute(input: AlertTriggerInput, ctx: ToolContext<typeof definition>): Promise<AlertTriggerOutput> {
    if (input.starts_at && input.ends_at && Date.parse(input.ends_at) < Date.parse(input.starts_at)) throw ToolError.invalidInput('ends_at', 'a time after starts_at', input.ends_at);
    return input.provider === 'alertmanager' ? toAlertmanager(input, ctx) : toPagerDuty(input, ctx);
  }
}

async function toAlertmanager(input: AlertTriggerInput, ctx: ToolContext): Promise<AlertTriggerOutput> {
  if (input.action === 'acknowledge') throw ToolError.invalidInput('action', "trigger or resolve (Alertmanager has no acknowledge; silence the alert instead)", input.action);
  if (!input.alert_name) throw ToolError.invalidInput('alert_name', 'the alertname of the Alertmanager alert');
  const baseUrl = input.url ?? (ctx.config.ALERTMANAGER_URL as string | undefined);
  if (!baseUrl) throw ToolError.invalidInput('url', 'the Alertmanager base URL (or ALERTMANAGER_URL set on the service)');
  const labels = { ...input.labels, alertname: input.alert_name, severity: input.severity };
  const badName = badLabelName(labels);
  if (badName !== undefined) throw ToolError.invalidInput('labels', 'label names of letters, digits and _ (not starting with a digit)', badName);
  const resolving = input.action === 'resolve';
  const endsAt = input.ends_at ?? (resolving ? new Date().toISOString() : undefined);
  const alert: PostableAlert = {
    labels,
    annotations: { ...input.annotations, ...(input.summary && { summary: input.summary }), ...(input.description && { description: input.description }) },
    ...(input.starts_at && { startsAt: input.starts_at }),
    ...(endsAt && { endsAt }),
    ...(input.generator_url && { generatorURL: input.generator_url }),
  };
  await postAlert(ctx, baseUrl, alert, input.timeout_ms);
  const base = { provider: 'alertmanager' as const, action: input.action, accepted: true, dedup_key: fingerprintOf(labels), message: null };
  if (resolving) return { ...base, state: 'resolved', starts_at: null, ends_at: endsAt ?? null, receivers: [] };
  // What Alertmanager now holds: its times (it fills startsAt/endsAt), state and routing.
  const held = await findAlert(ctx, baseUrl, labels, input.timeout_ms);
  return {
    ...base,
    state: held?.status.state ?? 'unprocessed',
    starts_at: held?.startsAt ?? input.starts_at ?? null,
    ends_at: held?.endsAt ?? input.ends_at ?? null,
    receivers: held?.receivers.map((receiver) => receiver.name) ?? [],
  };
}

async function toPagerDuty(input: AlertTriggerInput, ctx: ToolContext): Promise<AlertTriggerOutput> {
  if (input.action !== 'trigger' && !input.dedup_key) throw ToolError.invalidInput('dedup_key', `the dedup_key of the incident to ${input.action}`);
  const summary = input.summary ?? input.alert_name;
  if (input.action === 'trigger' && !summary) throw ToolError.invalidInput('summary', 'a summary of the problem (or an alert_name)');
  const routingKey = await ctx.secrets.get('PAGERDUTY_ROUTING_KEY');
  const details = { ...input.labels, ...input.annotations, ...(input.description && { description: input.description }) };
  const answer = await sendEvent(
    ctx,
    ctx.config.PAGERDUTY_EVENTS_URL as string,
    {
      routing_key: routingKey,
      event_action: input.action,
      ...(input.dedup_key && { dedup_key: input.dedup_key }),
      ...(input.action === 'trigger' && {
        payload: {
          summary: summary!,
          source: input.source,
          severity: input.severity,
          ...(input.starts_at && { timestamp: input.starts_at }),
          ...(input.alert_name && { class: input.alert_name }),
          ...(Object.keys(details).length > 0 && { custom_details: details }),
        },
        client: DEFAULT_SOURCE,
        ...(input.generator_url && { client_url: input.generator_url }),
      }),
    },
    input.timeout_ms,
  );
  return { provider: 'pagerduty', action: input.action, accepted: true, dedup_key: answer.dedup_key, state: null, starts_at: null, ends_at: null, receivers: [], message: answer.message };
}
