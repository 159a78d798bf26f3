/** Executions: a filtered list paged by cursor, and one execution followed live. */
import { api, query } from './api.js';
import { field, h, table, when } from './dom.js';
import { ExecutionRecord, followExecution } from './execution-live.js';

const PAGE_SIZE = 20;
const STATUSES = ['queued', 'running', 'input_required', 'success', 'error', 'cancelled'];

interface CursorPage {
  items: ExecutionRecord[];
  pagination: { after: string | null; has_more: boolean };
}

export async function executionsPage(main: HTMLElement): Promise<void> {
  const status = h('select', {}, h('option', { value: '' }, 'any'), ...STATUSES.map((s) => h('option', { value: s }, s)));
  const toolId = h('input', { type: 'text', pattern: '[a-z0-9\\-]{1,64}', autocomplete: 'off' });
  const results = h('div');
  const more = h('button', { type: 'button', class: 'secondary' }, 'Next page');
  /** Cursors of the pages walked so far: `after` of page n is cursors[n]. */
  let cursors: string[] = [''];
  let page = 0;
  const previous = h('button', { type: 'button', class: 'secondary' }, 'Previous page');

  const load = async () => {
    const { items, pagination } = await api<CursorPage>('GET', `/v1/executions${query({ after: cursors[page], limit: PAGE_SIZE, status: status.value || undefined, tool_id: toolId.value.trim() || undefined })}`);
    cursors[page + 1] = pagination.after ?? '';
    more.hidden = !pagination.has_more;
    previous.hidden = page === 0;
    results.replaceChildren(
      items.length === 0
        ? h('p', {}, 'No executions match.')
        : table(
            `Page ${page + 1}, newest first`,
            ['Execution', 'Tool', 'Status', 'Progress', 'Created', 'Duration'],
            items.map((e) => [h('a', { href: `#/executions/${e.id}` }, h('code', {}, e.id)), e.tool_id, h('span', { class: `status status-${e.status}` }, e.status), `${e.progress}%`, when(e.created_at), e.duration_ms === null ? '—' : `${e.duration_ms} ms`]),
          ),
    );
  };
  more.addEventListener('click', () => {
    page++;
    void load();
  });
  previous.addEventListener('click', () => {
    page--;
    void load();
  });
  const filters = h('form', { class: 'panel row', role: 'search', 'aria-label': 'Filter executions' }, field('Status', status), field('Tool id', toolId), h('button', { type: 'submit' }, 'Filter'));
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    cursors = [''];
    page = 0;
    void load();
  });

  main.append(h('h1', {}, 'Executions'), filters, results, h('div', { class: 'actions' }, previous, more));
  await load();
}

export async function executionPage(main: HTMLElement, id: string | undefined): Promise<() => void> {
  const live = h('section', { class: 'panel', 'aria-label': 'Execution' });
  main.append(h('p', {}, h('a', { href: '#/executions' }, '← All executions')), h('h1', {}, `Execution ${id}`), live);
  return followExecution(live, id!);
}
