/** Workflows: the account's list and a new one; one workflow's editor, versions, run form and runs. */
import { api, ApiError, query } from './api.js';
import { h, notify, table, when } from './dom.js';
import { InputSpec, inputForm } from './tool-form.js';
import { workflowEditor } from './workflow-editor.js';

const PAGE_SIZE = 50;
const RUNS_SHOWN = 20;

interface WorkflowSummary {
  id: string;
  name: string;
  tool_id: string;
  version: number;
  publish: boolean;
  description?: string;
  steps: number;
  created_at: string;
  updated_at: string;
}

interface WorkflowInput {
  type: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  required?: boolean;
}

interface Workflow extends WorkflowSummary {
  document: { inputs: Record<string, WorkflowInput> } & Record<string, unknown>;
}

interface RunSummary {
  id: string;
  status: string;
  progress: number;
  created_at: string;
  duration_ms: number | null;
}

/** What a new workflow's editor starts with: a one-step workflow on a built-in tool, in YAML. */
const TEMPLATE = `name: hello
description: Greets someone
inputs:
  who: { type: string, required: true, description: Whom to greet }
steps:
  - id: greet
    tool: json-transform
    inputs: { expression: "'Hello, ' & $", data: "\${{ inputs.who }}" }
outputs:
  greeting: "\${{ steps.greet.result.result }}"
`;

const describe = (error: unknown) => (error instanceof ApiError ? error.describe() : String(error));

export async function workflowsPage(main: HTMLElement): Promise<void> {
  const { workflows, total } = await api<{ workflows: WorkflowSummary[]; total: number }>('GET', `/v1/workflows${query({ limit: PAGE_SIZE })}`);
  const editor = workflowEditor('New workflow document (YAML or JSON)', TEMPLATE);
  const create = h('button', { type: 'submit' }, 'Create workflow');
  const form = h('form', { class: 'panel', 'aria-label': 'New workflow' }, h('h2', {}, 'New workflow'), h('p', { class: 'hint' }, 'YAML or JSON, as docs/workflows.md describes. Problems found on save are shown beside their lines.'), editor.element, h('div', { class: 'actions' }, create));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    create.disabled = true;
    try {
      const saved = await api<Workflow>('POST', '/v1/workflows', { document: editor.text() });
      notify(`Workflow ${saved.name} created (version ${saved.version}).`);
      window.location.hash = `#/workflows/${saved.id}`;
    } catch (error) {
      if (error instanceof ApiError && error.status === 400) editor.showError(error);
      else notify(describe(error), 'error');
    } finally {
      create.disabled = false;
    }
  });
  main.append(
    h('h1', {}, 'Workflows'),
    workflows.length === 0
      ? h('p', {}, 'No workflows yet.')
      : table(
          total > workflows.length ? `The newest ${workflows.length} of ${total}` : `${total} in this account, newest first`,
          ['Name', 'Tool id', 'Version', 'Steps', 'Published', 'Updated'],
          workflows.map((w) => [h('a', { href: `#/workflows/${w.id}` }, w.name), h('code', {}, w.tool_id), w.version, w.steps, w.publish ? 'yes' : 'no', when(w.updated_at)]),
        ),
    form,
  );
}

/** A workflow input as the "try it" form reads a tool's. */
const asInputSpec = (input: WorkflowInput): InputSpec => ({ type: input.type, required: input.required === true, description: input.description, enum: input.enum, default: input.default });

export async function workflowPage(main: HTMLElement, id: string | undefined): Promise<void> {
  const path = `/v1/workflows/${encodeURIComponent(id!)}`;
  let workflow = await api<Workflow>('GET', path);
  const heading = h('h1', {}, workflow.name);
  const facts = h('p');
  const editor = workflowEditor(`Document of ${workflow.name} (YAML or JSON)`, JSON.stringify(workflow.document, null, 2));
  const save = h('button', { type: 'submit' }, 'Save new version');
  const versions = h('section', { 'aria-label': 'Versions' });
  const runs = h('section', { 'aria-label': 'Runs' });
  const runSlot = h('div');
  const remove = h('button', { type: 'button', class: 'danger' }, `Delete ${workflow.name}`);

  const showFacts = () =>
    facts.replaceChildren(h('code', {}, workflow.tool_id), ` · version ${workflow.version} · ${workflow.steps === 1 ? '1 step' : `${workflow.steps} steps`} · ${workflow.publish ? 'published as a tool' : 'not published'}`, workflow.description ? ` · ${workflow.description}` : '');

  const showRunForm = () => {
    const run = async (inputs: Record<string, unknown>) => {
      try {
        const started = await api<{ execution_id: string }>('POST', `${path}/runs?async=true`, { inputs });
        window.location.hash = `#/runs/${started.execution_id}`;
      } catch (error) {
        notify(describe(error), 'error');
      }
    };
    runSlot.replaceChildren(inputForm(workflow.name, Object.fromEntries(Object.entries(workflow.document.inputs).map(([name, input]) => [name, asInputSpec(input)])), run));
  };

  const loadVersions = async () => {
    const list = (await api<{ versions: { version: number; created_at: string; document: unknown }[] }>('GET', `${path}/versions`)).versions;
    versions.replaceChildren(
      h('h2', {}, 'Versions'),
      table(
        'Every version is kept; a run stays on the version it started on',
        ['Version', 'Saved', 'Document'],
        list.map((v) => [
          v.version === workflow.version ? `${v.version} (current)` : v.version,
          when(v.created_at),
          h('button', { type: 'button', class: 'secondary', onClick: () => editor.setText(JSON.stringify(v.document, null, 2)) }, `Edit from version ${v.version}`),
        ]),
      ),
    );
  };

  const loadRuns = async () => {
    const list = (await api<{ runs: RunSummary[]; total: number }>('GET', `${path}/runs${query({ limit: RUNS_SHOWN })}`)).runs;
    runs.replaceChildren(
      h('h2', {}, 'Runs'),
      list.length === 0 ? h('p', {}, 'No runs yet.') : table('Newest first', ['Run', 'Status', 'Progress', 'Started', 'Duration'], list.map((r) => [h('a', { href: `#/runs/${r.id}` }, h('code', {}, r.id)), h('span', { class: `status status-${r.status}` }, r.status), `${r.progress}%`, when(r.created_at), r.duration_ms === null ? '—' : `${r.duration_ms} ms`])),
    );
  };

  const form = h('form', { class: 'panel', 'aria-label': 'Edit workflow' }, h('h2', {}, 'Document'), editor.element, h('div', { class: 'actions' }, save));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    save.disabled = true;
    try {
      workflow = await api<Workflow>('PUT', path, { document: editor.text() });
      editor.clearProblems();
      heading.textContent = workflow.name;
      showFacts();
      showRunForm();
      notify(`Saved ${workflow.name} version ${workflow.version}.`);
      await loadVersions();
    } catch (error) {
      if (error instanceof ApiError && error.status === 400) editor.showError(error);
      else notify(describe(error), 'error');
    } finally {
      save.disabled = false;
    }
  });
  remove.addEventListener('click', async () => {
    if (!confirm(`Delete ${workflow.name} and its versions? Its runs stay readable as executions.`)) return;
    try {
      await api('DELETE', path);
      notify(`Workflow ${workflow.name} deleted.`);
      window.location.hash = '#/workflows';
    } catch (error) {
      notify(describe(error), 'error');
    }
  });

  showFacts();
  showRunForm();
  main.append(h('p', {}, h('a', { href: '#/workflows' }, '← All workflows')), heading, facts, runSlot, runs, form, versions, h('div', { class: 'actions' }, remove));
  await Promise.all([loadVersions(), loadRuns()]);
}
