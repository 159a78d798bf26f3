/** One execution, kept current over its SSE stream (GET /v1/executions/{id}/events), with cancel. */
import { api, ApiError } from './api.js';
import { h, json, notify, when } from './dom.js';

export interface ExecutionRecord {
  id: string;
  tool_id: string;
  /** `workflow` for a workflow run, whose steps have a page of their own. */
  kind?: string;
  status: string;
  progress: number;
  progress_message?: string;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  duration_ms: number | null;
  input?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: string; message: string; suggestion?: string; details?: unknown };
}

const ACTIVE = new Set(['queued', 'running', 'input_required']);

/** Draws the execution into `container` and follows it until it ends; the answer stops following. */
export async function followExecution(container: HTMLElement, id: string): Promise<() => void> {
  const status = h('span', { class: 'status', 'aria-live': 'polite' });
  const progress = h('progress', { max: 100, value: 0, 'aria-label': 'Progress' });
  const progressText = h('span');
  const facts = h('dl', { class: 'facts' });
  const outcome = h('div');
  const cancel = h('button', { type: 'button', class: 'danger' }, 'Cancel execution');
  container.replaceChildren(h('p', {}, 'Status: ', status), h('p', {}, progress, ' ', progressText), cancel, facts, outcome);

  const showProgress = (percent: number, message?: string) => {
    progress.value = percent;
    progressText.textContent = `${Math.round(percent)}%${message ? ` · ${message}` : ''}`;
  };
  const showStatus = (value: string) => {
    status.textContent = value;
    status.className = `status status-${value}`;
    cancel.hidden = !ACTIVE.has(value);
  };
  const show = (execution: ExecutionRecord) => {
    showStatus(execution.status);
    // The last message reported mid-run says nothing once the execution has ended.
    showProgress(execution.progress, ACTIVE.has(execution.status) ? execution.progress_message : undefined);
    facts.replaceChildren(
      h('dt', {}, 'Execution'), h('dd', {}, h('a', { href: `#/executions/${execution.id}` }, h('code', {}, execution.id))),
      h('dt', {}, 'Tool'), h('dd', {}, h('a', { href: `#/tools/${execution.tool_id}` }, execution.tool_id)),
      ...(execution.kind === 'workflow' ? [h('dt', {}, 'Steps'), h('dd', {}, h('a', { href: `#/runs/${execution.id}` }, 'The run’s graph, live'))] : []),
      h('dt', {}, 'Started'), h('dd', {}, when(execution.started_at)),
      h('dt', {}, 'Finished'), h('dd', {}, when(execution.completed_at)),
      h('dt', {}, 'Duration'), h('dd', {}, execution.duration_ms === null ? '—' : `${execution.duration_ms} ms`),
    );
    const error = execution.error;
    outcome.replaceChildren(
      h(
        'div',
        {},
        execution.result ? h('section', { 'aria-label': 'Result' }, h('h3', {}, 'Result'), json(execution.result)) : null,
        error ? h('section', { 'aria-label': 'Error' }, h('h3', {}, 'Error'), h('p', { class: 'error-text' }, `${error.code}: ${error.message}`), error.suggestion ? h('p', {}, error.suggestion) : null, error.details ? json(error.details) : null) : null,
        execution.input ? h('details', {}, h('summary', {}, 'Input'), json(execution.input)) : null,
      ),
    );
  };

  cancel.addEventListener('click', async () => {
    cancel.disabled = true;
    try {
      await api('DELETE', `/v1/executions/${encodeURIComponent(id)}`);
      notify(`Execution ${id} cancelled.`);
    } catch (error) {
      notify(error instanceof ApiError ? error.describe() : String(error), 'error');
    } finally {
      cancel.disabled = false;
    }
  });

  const path = `/v1/executions/${encodeURIComponent(id)}`;
  show(await api<ExecutionRecord>('GET', path));
  if (!ACTIVE.has(status.textContent ?? '')) return () => undefined;

  const stream = new EventSource(`${path}/events`);
  stream.addEventListener('status', (event) => {
    const data = JSON.parse((event as MessageEvent).data);
    showStatus(data.status);
    // An ended execution's last progress message is stale: the result follows.
    if (!ACTIVE.has(data.status)) showProgress(data.progress);
  });
  stream.addEventListener('progress', (event) => {
    const data = JSON.parse((event as MessageEvent).data);
    showProgress(data.progress, data.message);
  });
  stream.addEventListener('result', (event) => {
    stream.close(); // the stream ends here; without this the browser would reconnect
    show(JSON.parse((event as MessageEvent).data));
  });
  stream.addEventListener('error', () => {
    if (stream.readyState === EventSource.CLOSED) return;
    stream.close();
    void api<ExecutionRecord>('GET', path).then(show, () => undefined);
  });
  return () => stream.close();
}
