/**
 * Webhooks: subscriptions (create with the signing secret shown once, send a test, rotate the
 * secret, enable, disable, delete) — docs/console.md#webhooks. A subscription's delivery log is
 * webhook-deliveries.ts.
 */
import { api, ApiError } from './api.js';
import { count, field, h, notify, table, when } from './dom.js';
import { showSecret } from './secret-box.js';

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  tool_ids: string[] | null;
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
}
type WithSecret = Webhook & { secret: string };

/** What an action did: a subscription (maybe with a new secret), a queued delivery, or nothing (deleted). */
type Outcome = Webhook | WithSecret | { id: string; event: string } | undefined;
export type Act = (done: string, call: () => Promise<Outcome>) => Promise<void>;

/** What a subscription may take (docs/API.md#webhooks); `webhook.disabled` says another subscription of the account was turned off. */
export const WEBHOOK_EVENTS = ['execution.completed', 'execution.failed', 'execution.cancelled', 'execution.input_required', 'webhook.disabled'];

export const webhookPath = (id: string) => `/v1/webhooks/${encodeURIComponent(id)}`;

/**
 * An `Act` that runs a call, shows a new secret when it made one (create, rotate) or else says
 * `done`, then `refresh`es; errors are shown in the notice as the API's envelope says them.
 */
export function actor(secretSlot: HTMLElement, refresh: () => Promise<void>): Act {
  return async (done, call) => {
    try {
      const outcome = await call();
      if (outcome && 'secret' in outcome) {
        const rotated = outcome.previous_secret_expires_at;
        showSecret(
          secretSlot,
          `Signing secret of ${outcome.url}`,
          outcome.secret,
          rotated
            ? `the old secret keeps signing beside it until ${when(rotated)}: give your receiver the new one before then.`
            : 'the service keeps it sealed and never shows it again. Your receiver verifies every request with it.',
        );
      } else notify(outcome && 'event' in outcome ? `${done}: delivery ${outcome.id}` : done);
      await refresh();
    } catch (error) {
      notify(error instanceof ApiError ? error.describe() : String(error), 'error');
    }
  };
}

export function stateOf(hook: Webhook): string {
  return hook.enabled ? 'enabled' : `disabled: ${hook.disabled_reason ?? 'paused by you'}`;
}

/** Send test, Rotate secret, Enable or Disable, Delete: the same on the list and on a subscription's page (`onDeleted` runs before the refresh). */
export function webhookActions(hook: Webhook, act: Act, onDeleted: () => void = () => undefined): HTMLElement {
  const path = webhookPath(hook.id);
  const button = (label: string, kind: string, call: () => void) => h('button', { type: 'button', class: kind, 'aria-label': `${label} ${hook.url}`, onClick: call }, label);
  return h(
    'div',
    { class: 'actions' },
    hook.enabled && button('Send test', 'secondary', () => void act('Ping queued', () => api('POST', `${path}/test`, {}))),
    button('Rotate secret', 'secondary', () => confirm(`Rotate the secret of ${hook.url}? A new one signs from now; the old one keeps signing beside it for a while.`) && void act('Rotated', () => api('POST', `${path}/rotate-secret`, {}))),
    hook.enabled
      ? button('Disable', 'secondary', () => void act(`Disabled ${hook.url}`, () => api('PATCH', path, { enabled: false })))
      : button(hook.disabled_reason ? 'Re-enable' : 'Enable', 'secondary', () => void act(`Enabled ${hook.url}`, () => api('PATCH', path, { enabled: true }))),
    button('Delete', 'danger', () =>
      confirm(`Delete the webhook to ${hook.url}? Its delivery log goes with it.`) &&
      void act(`Deleted ${hook.url}`, async () => {
        await api<undefined>('DELETE', path);
        onDeleted();
        return undefined;
      }),
    ),
  );
}

export async function webhooksPage(main: HTMLElement): Promise<void> {
  const { tools } = await api<{ tools: { id: string; name: string }[] }>('GET', '/v1/tools?limit=100');
  const secretSlot = h('div');
  const list = h('div');
  const refresh = async () => {
    const { webhooks, total, max_webhooks } = await api<{ webhooks: Webhook[]; total: number; max_webhooks: number }>('GET', '/v1/webhooks?limit=100');
    list.replaceChildren(
      webhooks.length === 0
        ? h('p', {}, 'No webhooks yet.')
        : table(
            `${total} of at most ${count(max_webhooks, 'webhook')}`,
            ['URL', 'Events', 'Tools', 'State', 'Created', 'Actions'],
            webhooks.map((hook) => [
              h('a', { href: `#/webhooks/${encodeURIComponent(hook.id)}`, title: 'Its delivery log' }, hook.url),
              hook.events.join(', '),
              hook.tool_ids ? hook.tool_ids.join(', ') : 'all',
              h('span', { class: hook.enabled ? 'status status-success' : 'status status-error' }, stateOf(hook)),
              when(hook.created_at),
              webhookActions(hook, act),
            ]),
          ),
    );
  };
  const act = actor(secretSlot, refresh);

  main.append(
    h('h1', {}, 'Webhooks'),
    h(
      'ul',
      { class: 'hint' },
      h('li', {}, 'The service POSTs each event you choose to your URL, signed with the subscription’s secret (Standard Webhooks), and retries for about a day until it answers 2xx.'),
      h('li', {}, 'A subscription answered 410, or failing every retry, is disabled, and says why here; re-enable it once the endpoint is fixed. Subscribe one to webhook.disabled (your alerting, say) to hear of it.'),
      h('li', {}, 'Open a URL for its delivery log: every attempt with its answer, and redelivery.'),
    ),
    secretSlot,
    createForm(tools, (body) => act('Created', () => api<WithSecret>('POST', '/v1/webhooks', body))),
    h('h2', {}, 'Your webhooks'),
    list,
  );
  await refresh();
}

function createForm(tools: { id: string; name: string }[], create: (body: Record<string, unknown>) => Promise<void>): HTMLFormElement {
  const url = h('input', { type: 'text', inputmode: 'url', name: 'url', required: true, maxlength: 2048, autocomplete: 'off', placeholder: 'https://hooks.example.com/tos' });
  const eventBoxes = WEBHOOK_EVENTS.map((event) => h('input', { type: 'checkbox', name: 'events', value: event, checked: event === 'execution.completed' || event === 'execution.failed' }));
  const toolSelect = h('select', { name: 'tool_ids', multiple: true }, ...tools.map((tool) => h('option', { value: tool.id }, `${tool.name} (${tool.id})`)));
  const description = h('input', { type: 'text', name: 'description', maxlength: 500, autocomplete: 'off' });
  const form = h(
    'form',
    { class: 'panel', 'aria-labelledby': 'create-webhook-heading' },
    h('h2', { id: 'create-webhook-heading' }, 'Add a webhook'),
    h('div', { class: 'row' }, field('URL', url, 'http or https; it must be reachable under the egress policy.'), field('Description', description)),
    h('fieldset', {}, h('legend', {}, 'Events'), ...eventBoxes.map((box) => h('label', {}, box, box.value))),
    field('Tools', toolSelect, 'Select none for every tool’s executions; Ctrl or Shift to select several.'),
    h('button', { type: 'submit' }, 'Add webhook'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const events = eventBoxes.filter((box) => box.checked).map((box) => box.value);
    if (events.length === 0) return notify('Choose at least one event.', 'error');
    const chosenTools = [...toolSelect.selectedOptions].map((option) => option.value);
    void create({ url: url.value.trim(), events, ...(chosenTools.length > 0 && { tool_ids: chosenTools }), ...(description.value.trim() && { description: description.value.trim() }) }).then(() => form.reset());
  });
  return form;
}
