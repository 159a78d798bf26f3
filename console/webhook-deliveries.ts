/**
 * One webhook subscription: its facts and actions, and its delivery log — paged, filtered by status
 * and event, every attempt's time, status code, latency and answer, and Redeliver
 * (docs/console.md#webhooks). While a delivery is pending the log reloads itself.
 */
import { api, query } from './api.js';
import { field, h, table, when } from './dom.js';
import { pager } from './pager.js';
import { actor, stateOf, Webhook, WEBHOOK_EVENTS, webhookActions, webhookPath } from './webhooks.js';

const PAGE_SIZE = 20;
const STATUSES = ['pending', 'delivered', 'failed'];
/** How often a log with a pending delivery reloads (the first retries are seconds apart). */
const PENDING_RELOAD_MS = 2_000;

interface Attempt {
  at: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  response_excerpt: string | null;
}

interface Delivery {
  id: string;
  event: string;
  execution_id: string | null;
  status: 'pending' | 'delivered' | 'failed';
  created_at: string;
  next_attempt_at: string | null;
  last_error: string | null;
  attempts: Attempt[];
}

export async function webhookPage(main: HTMLElement, id: string | undefined): Promise<() => void> {
  const path = webhookPath(id!);
  const secretSlot = h('div');
  const facts = h('section', { class: 'panel', 'aria-label': 'Subscription' });
  const log = h('div');
  const status = h('select', {}, h('option', { value: '' }, 'any'), ...STATUSES.map((s) => h('option', { value: s }, s)));
  const event = h('select', {}, h('option', { value: '' }, 'any'), ...[...WEBHOOK_EVENTS, 'ping'].map((e) => h('option', { value: e }, e)));
  const filters = h('form', { class: 'panel row', role: 'search', 'aria-label': 'Filter deliveries' }, field('Status', status), field('Event', event), h('button', { type: 'submit' }, 'Filter'));
  const pages = pager(PAGE_SIZE, filters, () => void refresh());
  /** Set when the page is left or the subscription deleted: nothing reloads after that. */
  let gone = false;
  let reload: ReturnType<typeof setTimeout> | undefined;

  const refresh = async () => {
    if (gone) return;
    clearTimeout(reload);
    const offset = pages.offset();
    const [hook, page] = await Promise.all([
      api<Webhook>('GET', path),
      api<{ deliveries: Delivery[]; total: number }>('GET', `${path}/deliveries${query({ limit: PAGE_SIZE, offset, status: status.value || undefined, event: event.value || undefined })}`),
    ]);
    if (gone) return;
    facts.replaceChildren(
      subscriptionFacts(hook),
      webhookActions(hook, act, () => {
        gone = true;
        window.location.hash = '#/webhooks';
      }),
    );
    pages.shown(page.deliveries.length, page.total);
    log.replaceChildren(
      page.deliveries.length === 0
        ? h('p', {}, 'No deliveries match.')
        : table(
            `Deliveries ${offset + 1}–${offset + page.deliveries.length} of ${page.total}, newest first`,
            ['Delivery', 'Event', 'Status', 'Created', 'Attempts', 'Actions'],
            page.deliveries.map((delivery) => [
              h('code', {}, delivery.id),
              h('span', {}, delivery.event, delivery.execution_id && h('br'), delivery.execution_id && h('a', { href: `#/executions/${encodeURIComponent(delivery.execution_id)}` }, delivery.execution_id)),
              h('span', { class: `status status-${delivery.status === 'delivered' ? 'success' : delivery.status === 'failed' ? 'error' : 'running'}` }, delivery.status),
              when(delivery.created_at),
              attemptList(delivery),
              delivery.status === 'pending'
                ? h('span', { class: 'hint' }, `Next attempt ${when(delivery.next_attempt_at)}`)
                : h('button', { type: 'button', class: 'secondary', 'aria-label': `Redeliver ${delivery.id}`, onClick: () => void act('Redelivery queued', () => api('POST', `${path}/deliveries/${encodeURIComponent(delivery.id)}/redeliver`, {})) }, 'Redeliver'),
            ]),
          ),
    );
    if (page.deliveries.some((delivery) => delivery.status === 'pending')) reload = setTimeout(() => void refresh().catch(() => undefined), PENDING_RELOAD_MS);
  };
  const act = actor(secretSlot, refresh);


  main.append(
    h('p', {}, h('a', { href: '#/webhooks' }, '← All webhooks')),
    h('h1', {}, `Webhook ${id}`),
    secretSlot,
    facts,
    h('h2', {}, 'Delivery log'),
    filters,
    h('div', { class: 'actions' }, h('button', { type: 'button', class: 'secondary', onClick: () => void refresh() }, 'Refresh')),
    log,
    h('div', { class: 'actions' }, pages.previous, pages.next),
  );
  await refresh();
  return () => {
    gone = true;
    clearTimeout(reload);
  };
}

function subscriptionFacts(hook: Webhook): HTMLElement {
  const fact = (term: string, value: string) => [h('dt', {}, term), h('dd', {}, value)];
  return h(
    'dl',
    { class: 'facts' },
    ...fact('URL', hook.url),
    ...fact('Events', hook.events.join(', ')),
    ...fact('Tools', hook.tool_ids ? hook.tool_ids.join(', ') : 'all'),
    ...fact('State', stateOf(hook)),
    ...(hook.description ? fact('Description', hook.description) : []),
    ...(hook.previous_secret_expires_at ? fact('Previous secret signs until', when(hook.previous_secret_expires_at)) : []),
    ...fact('Created', when(hook.created_at)),
  );
}

/** Each attempt on a line: when, the status code or why there was none, the latency; the answer's first bytes below. */
function attemptList(delivery: Delivery): HTMLElement {
  if (delivery.attempts.length === 0) return h('span', { class: 'hint' }, 'not sent yet');
  return h(
    'ol',
    { class: 'attempts' },
    ...delivery.attempts.map((attempt) =>
      h(
        'li',
        {},
        `${when(attempt.at)} · `,
        h('strong', {}, attempt.status_code === null ? 'no answer' : `HTTP ${attempt.status_code}`),
        ` · ${attempt.latency_ms} ms`,
        attempt.error && h('div', { class: 'error-text' }, attempt.error),
        attempt.response_excerpt && h('pre', { class: 'excerpt', 'aria-label': 'Response excerpt' }, attempt.response_excerpt),
      ),
    ),
  );
}
