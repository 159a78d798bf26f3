/** Triggers: the list with inbound URLs, create (the secret shown once), delete; one trigger's recent events (docs/orchestration.md#triggers). */
import { api, ApiError, query } from './api.js';
import { count, field, h, notify, table, when } from './dom.js';
import { showSecret } from './secret-box.js';
import { runAsField, runHref, Target, targetFields, targetLabel, workflowNames } from './target-fields.js';

interface Trigger {
  id: string;
  target: Target;
  verification: { type: string } | null;
  source: { event: string; tool_ids: string[] | null } | null;
  url: string | null;
  filter: string | null;
  inputs: Record<string, string> | null;
  description: string | null;
  key_id: string;
  created_at: string;
}

interface TriggerEvent {
  id: string;
  at: string;
  status: string;
  accepted: boolean;
  reason: string | null;
  delivery_id: string | null;
  execution_id: string | null;
}

const PAGE_SIZE = 100;
const EVENTS_SHOWN = 50;
/** How an inbound URL's senders are verified (docs/orchestration.md#verification), and the service's own events an internal trigger starts on. */
const VERIFICATIONS = ['github', 'gitlab', 'standard_webhooks', 'bearer'];
const SOURCE_EVENTS = ['execution.failed', 'execution.completed', 'execution.cancelled'];

const describe = (error: unknown) => (error instanceof ApiError ? error.describe() : String(error));
const triggerPath = (id: string) => `/v1/triggers/${encodeURIComponent(id)}`;
/** The inbound URL as senders call it: the service's own origin, the one this page came from. */
const inboundUrl = (trigger: Trigger) => (trigger.url ? `${window.location.origin}${trigger.url}` : null);

function startsOn(trigger: Trigger): string {
  if (trigger.verification) return `POST, verified by ${trigger.verification.type}`;
  const source = trigger.source!;
  return `${source.event} of ${source.tool_ids ? source.tool_ids.join(', ') : 'any tool'}`;
}

/** `{"repo": "payload.repository.full_name"}`: each value a JSONata expression over `{ payload, headers }`. */
function readMapping(area: HTMLTextAreaElement): Record<string, string> | undefined {
  area.setCustomValidity('');
  if (area.value.trim() === '') return undefined;
  let mapping: unknown;
  try {
    mapping = JSON.parse(area.value);
  } catch {
    mapping = undefined;
  }
  if (!mapping || typeof mapping !== 'object' || Array.isArray(mapping) || !Object.values(mapping).every((v) => typeof v === 'string')) {
    area.setCustomValidity('A JSON object of input names to JSONata expressions (strings)');
    area.reportValidity();
    throw new Error('bad mapping');
  }
  return mapping as Record<string, string>;
}

export async function triggersPage(main: HTMLElement): Promise<void> {
  const names = await workflowNames();
  const [target, runAs] = await Promise.all([targetFields(names), runAsField()]);
  const secretSlot = h('div');
  const list = h('div');
  const refresh = async () => {
    const { triggers, total, max_triggers } = await api<{ triggers: Trigger[]; total: number; max_triggers: number }>('GET', `/v1/triggers${query({ limit: PAGE_SIZE })}`);
    list.replaceChildren(
      triggers.length === 0
        ? h('p', {}, 'No triggers yet.')
        : table(
            `${count(total, 'trigger')} of at most ${max_triggers}`,
            ['Trigger', 'Target', 'Starts on', 'Inbound URL', 'Filter', 'Actions'],
            triggers.map((t) => [
              h('a', { href: `#/triggers/${t.id}` }, h('code', {}, t.id)),
              targetLabel(t.target, names),
              startsOn(t),
              inboundUrl(t) ? h('code', {}, inboundUrl(t)) : '—',
              t.filter ? h('code', {}, t.filter) : '—',
              h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${t.id}`, onClick: () => confirm(`Delete trigger ${t.id}? Its URL answers 404 from then on.`) && void remove(t.id) }, 'Delete'),
            ]),
          ),
    );
  };
  const remove = async (id: string) => {
    try {
      await api('DELETE', triggerPath(id));
      notify(`Trigger ${id} deleted.`);
      await refresh();
    } catch (error) {
      notify(describe(error), 'error');
    }
  };

  const startsWith = h('select', {}, h('optgroup', { label: 'An inbound URL, verified by' }, ...VERIFICATIONS.map((v) => h('option', { value: v }, v))), h('optgroup', { label: 'This service’s own event' }, ...SOURCE_EVENTS.map((e) => h('option', { value: e }, e))));
  const sourceTools = h('input', { type: 'text', autocomplete: 'off', placeholder: 'secret-scan, sast-scan' });
  const sourceField = field('Of the tools', sourceTools, 'Comma-separated tool ids; empty: any tool.');
  const showSource = () => (sourceField.hidden = VERIFICATIONS.includes(startsWith.value));
  startsWith.addEventListener('change', showSource);
  showSource();
  const filter = h('textarea', { rows: 2, spellcheck: 'false', placeholder: "headers.`x-github-event` = 'push' and payload.ref = 'refs/heads/main'" });
  const mapping = h('textarea', { rows: 3, spellcheck: 'false', placeholder: '{ "workspace": "payload.repository.full_name" }' });
  const description = h('input', { type: 'text', maxlength: 500, autocomplete: 'off' });
  const form = h(
    'form',
    { class: 'panel', 'aria-label': 'New trigger' },
    h('h2', {}, 'New trigger'),
    target.element,
    h('div', { class: 'row' }, field('Starts on', startsWith), sourceField, runAs.element),
    field('Filter (optional)', filter, 'JSONata over { payload, headers }: a false answer refuses the event.'),
    field('Input mapping (optional)', mapping, 'JSON: target input name → JSONata over { payload, headers }; it replaces the literal input.'),
    field('Description', description),
    h('button', { type: 'submit' }, 'Create trigger'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    let body: Record<string, unknown>;
    try {
      const inbound = VERIFICATIONS.includes(startsWith.value);
      const tools = sourceTools.value.split(',').map((t) => t.trim()).filter(Boolean);
      body = {
        target: target.read(),
        ...(inbound ? { verification: { type: startsWith.value } } : { source: { event: startsWith.value, ...(tools.length > 0 && { tool_ids: tools }) } }),
        ...(filter.value.trim() && { filter: filter.value.trim() }),
        ...(readMapping(mapping) && { inputs: readMapping(mapping) }),
        ...(description.value.trim() && { description: description.value.trim() }),
        key_id: runAs.read(),
      };
    } catch {
      return;
    }
    try {
      const created = await api<Trigger & { secret?: string }>('POST', '/v1/triggers', body);
      if (created.secret) showSecret(secretSlot, `Secret of trigger ${created.id} (${inboundUrl(created)})`, created.secret, 'the service keeps it sealed and never shows it again. Give it to the sender that posts to the URL.');
      else notify(`Trigger ${created.id} created.`);
      form.reset();
      showSource();
      await refresh();
    } catch (error) {
      notify(describe(error), 'error');
    }
  });

  main.append(h('h1', {}, 'Triggers'), secretSlot, list, form);
  await refresh();
}

export async function triggerPage(main: HTMLElement, id: string | undefined): Promise<void> {
  const [trigger, names] = await Promise.all([api<Trigger>('GET', triggerPath(id!)), workflowNames()]);
  const events = h('div');
  const load = async () => {
    const page = await api<{ events: TriggerEvent[]; total: number }>('GET', `${triggerPath(id!)}/events${query({ limit: EVENTS_SHOWN })}`);
    events.replaceChildren(
      page.events.length === 0
        ? h('p', {}, 'No events yet.')
        : table(
            `The newest ${page.events.length} of ${page.total}`,
            ['Received', 'Outcome', 'Why', 'Delivery id', 'Execution'],
            page.events.map((e) => [
              when(e.at),
              h('span', { class: e.accepted ? 'status status-success' : 'status status-error' }, `${e.accepted ? 'accepted' : 'refused'} (${e.status})`),
              e.reason ?? '',
              e.delivery_id ? h('code', {}, e.delivery_id) : '—',
              e.execution_id ? h('a', { href: runHref(trigger.target, e.execution_id) }, h('code', {}, e.execution_id)) : '—',
            ]),
          ),
    );
  };
  main.append(
    h('p', {}, h('a', { href: '#/triggers' }, '← All triggers')),
    h('h1', {}, `Trigger ${trigger.id}`),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Target'), h('dd', {}, targetLabel(trigger.target, names)),
      h('dt', {}, 'Starts on'), h('dd', {}, startsOn(trigger)),
      h('dt', {}, 'Inbound URL'), h('dd', {}, inboundUrl(trigger) ? h('code', {}, inboundUrl(trigger)) : '—'),
      h('dt', {}, 'Filter'), h('dd', {}, trigger.filter ? h('code', {}, trigger.filter) : '—'),
      h('dt', {}, 'Input mapping'), h('dd', {}, trigger.inputs ? h('code', {}, JSON.stringify(trigger.inputs)) : '—'),
      h('dt', {}, 'Runs as'), h('dd', {}, h('code', {}, trigger.key_id)),
    ),
    h('h2', {}, 'Recent events'),
    h('button', { type: 'button', class: 'secondary', onClick: () => void load() }, 'Reload events'),
    events,
  );
  await load();
}
