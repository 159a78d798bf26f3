/** Tools: the catalogue with search and category filter; one tool's schema, docs and "try it" form. */
import { api, ApiError, apiText, query } from './api.js';
import { count, field, h, notify, table } from './dom.js';
import { followExecution } from './execution-live.js';
import { markdown } from './markdown.js';
import { InputSpec, inputForm } from './tool-form.js';

interface ToolSummary {
  id: string;
  name: string;
  category: string;
  description: string;
  status: string;
  version: string;
  inputs: Record<string, InputSpec>;
  outputs: Record<string, { type: string; description: string }>;
  rate_limit: string;
  timeout: string;
  /** On the tool's own page: its examples, the first of which the form starts from. */
  examples?: { name: string; input: Record<string, unknown> }[];
}

export async function toolsPage(main: HTMLElement): Promise<void> {
  const all = (await api<{ tools: ToolSummary[] }>('GET', '/v1/tools?limit=100')).tools;
  const categories = [...new Set(all.map((tool) => tool.category))].sort();
  const search = h('input', { type: 'search', autocomplete: 'off' });
  const category = h('select', {}, h('option', { value: '' }, 'all'), ...categories.map((c) => h('option', { value: c }, c)));
  const results = h('div', { 'aria-live': 'polite' });
  const show = (tools: ToolSummary[]) =>
    results.replaceChildren(
      h('p', {}, count(tools.length, 'tool')),
      h(
        'ul',
        { class: 'cards' },
        ...tools.map((tool) =>
          h('li', {}, h('h2', {}, h('a', { href: `#/tools/${tool.id}` }, tool.name)), h('p', {}, h('span', { class: 'tag' }, tool.category), h('span', { class: 'tag' }, tool.status), h('code', {}, tool.id)), markdown(tool.description)),
        ),
      ),
    );
  const filter = async () => show((await api<{ tools: ToolSummary[] }>('GET', `/v1/tools${query({ limit: 100, search: search.value.trim() || undefined, category: category.value || undefined })}`)).tools);
  const form = h('form', { class: 'panel row', role: 'search', 'aria-label': 'Search tools' }, field('Search names and descriptions', search), field('Category', category), h('button', { type: 'submit' }, 'Search'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void filter();
  });
  category.addEventListener('change', () => void filter());
  main.append(h('h1', {}, 'Tools'), form, results);
  show(all);
}

export async function toolPage(main: HTMLElement, id: string | undefined): Promise<() => void> {
  const path = `/v1/tools/${encodeURIComponent(id!)}`;
  const [tool, docs] = await Promise.all([api<ToolSummary>('GET', path), apiText(`${path}/docs`)]);
  const runPanel = h('section', { class: 'panel', 'aria-label': 'Run' });
  runPanel.hidden = true;
  let stopFollowing = () => undefined as void;

  const run = async (inputs: Record<string, unknown>) => {
    try {
      stopFollowing();
      const accepted = await api<{ execution_id: string }>('POST', `${path}/invoke?async=true`, { inputs });
      runPanel.hidden = false;
      stopFollowing = await followExecution(runPanel, accepted.execution_id);
    } catch (error) {
      notify(error instanceof ApiError ? error.describe() : String(error), 'error');
    }
  };

  main.append(
    h('p', {}, h('a', { href: '#/tools' }, '← All tools')),
    h('h1', {}, tool.name),
    h('p', {}, h('span', { class: 'tag' }, tool.category), h('span', { class: 'tag' }, tool.status), h('code', {}, `${tool.id} ${tool.version}`), ` · timeout ${tool.timeout} · ${tool.rate_limit}`),
    markdown(tool.description),
    inputForm(tool.name, tool.inputs, run, tool.examples?.[0]),
    runPanel,
    h('h2', {}, 'Schema'),
    table('Inputs', ['Name', 'Type', 'Required', 'Allowed values', 'Default', 'Description'], Object.entries(tool.inputs).map(([name, spec]) => [h('code', {}, name), spec.type, spec.required ? 'yes' : 'no', spec.enum ? spec.enum.join(', ') : '', spec.default === undefined ? '' : JSON.stringify(spec.default), spec.description ?? ''])),
    table('Outputs', ['Name', 'Type', 'Description'], Object.entries(tool.outputs).map(([name, spec]) => [h('code', {}, name), spec.type, spec.description])),
    h('details', {}, h('summary', {}, 'Documentation'), markdown(docs)),
  );
  return () => stopFollowing();
}
