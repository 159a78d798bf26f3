/**
 * The Upstreams page's Audit section (docs/console.md#upstreams, docs/upstreams.md#audit-log): who
 * registered, changed and called which upstream, newest first, paged, filtered by action; a call
 * links to its execution.
 */
import { api, query } from './api.js';
import { field, h, table, when } from './dom.js';
import { pager } from './pager.js';

const PAGE_SIZE = 20;
const ACTIONS = ['upstream.created', 'upstream.updated', 'upstream.deleted', 'upstream.enabled', 'upstream.disabled', 'upstream.tool_enabled', 'upstream.tool_disabled', 'upstream.called'];

interface AuditEvent {
  id: string;
  action: string;
  actor: string;
  upstream_id: string;
  upstream: string;
  details: { tool?: string; tool_id?: string; execution_id?: string; outcome?: string; [key: string]: unknown };
  created_at: string;
}

/** What the event says beyond its action: the tool and the call's outcome and execution, or the settings a change named. */
function detailsCell({ action, details }: AuditEvent): HTMLElement {
  if (action === 'upstream.called') {
    return h(
      'span',
      {},
      h('code', {}, details.tool_id ?? ''),
      ' ',
      h('span', { class: `status status-${details.outcome === 'ok' ? 'success' : 'error'}` }, details.outcome ?? ''),
      details.execution_id && h('br'),
      details.execution_id && h('a', { href: `#/executions/${encodeURIComponent(details.execution_id)}` }, details.execution_id),
    );
  }
  if (details.tool_id) return h('code', {}, details.tool_id);
  const keys = Object.keys(details);
  return keys.length === 0 ? h('span', { class: 'hint' }, '—') : h('details', {}, h('summary', {}, keys.join(', ')), h('pre', { class: 'excerpt' }, JSON.stringify(details, null, 2)));
}

/** The section, and its reload (the page calls it after each of its own changes). */
export function upstreamAuditSection(): { element: HTMLElement; refresh: () => Promise<void> } {
  const log = h('div');
  const action = h('select', {}, h('option', { value: '' }, 'any'), ...ACTIONS.map((a) => h('option', { value: a }, a)));
  const filters = h('form', { class: 'panel row', role: 'search', 'aria-label': 'Filter audit events' }, field('Audit action', action), h('button', { type: 'submit' }, 'Filter'));
  const pages = pager(PAGE_SIZE, filters, () => void refresh());

  const refresh = async () => {
    const offset = pages.offset();
    const page = await api<{ events: AuditEvent[]; total: number }>('GET', `/v1/upstreams/audit${query({ limit: PAGE_SIZE, offset, action: action.value || undefined })}`);
    pages.shown(page.events.length, page.total);
    log.replaceChildren(
      page.events.length === 0
        ? h('p', {}, 'No events match.')
        : table(
            `Events ${offset + 1}–${offset + page.events.length} of ${page.total}, newest first`,
            ['When', 'Action', 'Upstream', 'Who', 'Details'],
            page.events.map((event) => [when(event.created_at), h('code', {}, event.action), h('span', { title: event.upstream_id }, event.upstream), h('code', {}, event.actor), detailsCell(event)]),
          ),
    );
  };

  const element = h('section', { 'aria-labelledby': 'upstream-audit-heading' }, h('h2', { id: 'upstream-audit-heading' }, 'Audit'), h('p', { class: 'hint' }, 'Who registered, changed and called your upstreams. Secret values, headers and inputs are never recorded.'), filters, log, h('div', { class: 'actions' }, pages.previous, pages.next));
  return { element, refresh };
}
