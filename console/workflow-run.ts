/** A workflow run's page: its DAG with each step's status, kept live over the run's graph stream, its outcome, and cancel. */
import { api, ApiError } from './api.js';
import { drawDag } from './dag.js';
import { h, json, notify, table, when } from './dom.js';
import type { ExecutionRecord } from './execution-live.js';

interface StepCall {
  execution_id: string;
  step_key: string;
  status: string;
  progress: number;
  duration_ms: number | null;
}

interface GraphStep {
  id: string;
  tool: string;
  needs: string[];
  if?: string;
  for_each?: string;
  continue_on_error: boolean;
  status: string;
  error?: { code: string; message: string };
  calls: StepCall[];
}

/** GET /v1/workflows/runs/{id} (docs/workflows.md#a-runs-graph). */
interface RunGraph {
  run: ExecutionRecord & { input_requests?: Record<string, unknown> };
  workflow_id: string;
  version: number;
  steps: GraphStep[];
}

const ACTIVE = new Set(['queued', 'running', 'input_required']);

const lastCall = (step: GraphStep) => step.calls[step.calls.length - 1];

export async function runPage(main: HTMLElement, id: string | undefined): Promise<() => void> {
  const path = `/v1/workflows/runs/${encodeURIComponent(id!)}`;
  const facts = h('dl', { class: 'facts' });
  const status = h('span', { class: 'status', 'aria-live': 'polite' });
  const progress = h('progress', { max: 100, value: 0, 'aria-label': 'Progress' });
  const progressText = h('span');
  const cancel = h('button', { type: 'button', class: 'danger' }, 'Cancel run');
  const graph = h('div', { class: 'dag-frame' });
  const steps = h('div');
  const outcome = h('div');

  const show = (view: RunGraph) => {
    const run = view.run;
    status.textContent = run.status;
    status.className = `status status-${run.status}`;
    cancel.hidden = !ACTIVE.has(run.status);
    progress.value = run.progress;
    progressText.textContent = `${run.progress}%${ACTIVE.has(run.status) && run.progress_message ? ` · ${run.progress_message}` : ''}`;
    facts.replaceChildren(
      h('dt', {}, 'Workflow'), h('dd', {}, h('a', { href: `#/workflows/${view.workflow_id}` }, run.tool_id), ` version ${view.version}`),
      h('dt', {}, 'Execution'), h('dd', {}, h('a', { href: `#/executions/${run.id}` }, h('code', {}, run.id))),
      h('dt', {}, 'Started'), h('dd', {}, when(run.started_at)),
      h('dt', {}, 'Finished'), h('dd', {}, when(run.completed_at)),
      h('dt', {}, 'Duration'), h('dd', {}, run.duration_ms === null ? '—' : `${run.duration_ms} ms`),
    );
    graph.replaceChildren(drawDag(view.steps.map((step) => ({ ...step, href: lastCall(step) && `#/executions/${lastCall(step).execution_id}` })), `Steps of run ${run.id} and what each needs`));
    steps.replaceChildren(
      table(
        'Steps, in the order of the document',
        ['Step', 'Tool', 'Needs', 'Status', 'Calls'],
        view.steps.map((step) => [
          h('code', {}, step.id),
          step.tool,
          step.needs.join(', ') || '—',
          h('span', { class: `status status-${step.status}` }, step.status, step.error ? ` · ${step.error.code}: ${step.error.message}` : ''),
          step.calls.length === 0 ? '—' : h('span', {}, ...step.calls.flatMap((call, index) => [index > 0 ? ', ' : '', h('a', { href: `#/executions/${call.execution_id}` }, `${call.step_key} (${call.status})`)])),
        ]),
      ),
    );
    outcome.replaceChildren(h(
      'div',
      {},
      run.status === 'input_required' && run.input_requests
        ? h('section', { 'aria-label': 'Questions' }, h('h3', {}, 'Waiting for input'), h('p', {}, 'A step asks its caller; answer with ', h('code', {}, `POST /v1/executions/${run.id}/input`), ' (docs/workflows.md#asking-for-input).'), json(run.input_requests))
        : null,
      run.result ? h('section', { 'aria-label': 'Outputs' }, h('h3', {}, 'Outputs'), json(run.result)) : null,
      run.error ? h('section', { 'aria-label': 'Error' }, h('h3', {}, 'Error'), h('p', { class: 'error-text' }, `${run.error.code}: ${run.error.message}`), run.error.details ? json(run.error.details) : null) : null,
      run.input ? h('details', {}, h('summary', {}, 'Inputs'), json(run.input)) : null,
    ));
  };

  cancel.addEventListener('click', async () => {
    cancel.disabled = true;
    try {
      await api('DELETE', `/v1/executions/${encodeURIComponent(id!)}`);
      notify(`Run ${id} cancelled.`);
    } catch (error) {
      notify(error instanceof ApiError ? error.describe() : String(error), 'error');
    } finally {
      cancel.disabled = false;
    }
  });

  const first = await api<RunGraph>('GET', path);
  main.append(
    h('p', {}, h('a', { href: `#/workflows/${first.workflow_id}` }, '← The workflow')),
    h('h1', {}, `Run ${id}`),
    h('section', { class: 'panel', 'aria-label': 'Run' }, h('p', {}, 'Status: ', status), h('p', {}, progress, ' ', progressText), cancel, facts),
    h('h2', {}, 'Steps'),
    graph,
    steps,
    outcome,
  );
  show(first);
  if (!ACTIVE.has(first.run.status)) return () => undefined;

  // Each event is the whole graph: a stream the browser reconnects misses nothing.
  const stream = new EventSource(`${path}/events`);
  stream.addEventListener('graph', (event) => {
    const view = JSON.parse((event as MessageEvent).data) as RunGraph;
    show(view);
    if (!ACTIVE.has(view.run.status)) stream.close(); // the last event: without this the browser would reconnect
  });
  stream.addEventListener('error', () => {
    // Refused for good (the session ended, say): show the state as it is now, once.
    if (stream.readyState === EventSource.CLOSED) void api<RunGraph>('GET', path).then(show, () => undefined);
  });
  return () => stream.close();
}
