/** What schedules and triggers start (a tool or a workflow, with inputs) and the API key they run as: form fields and how targets read. */
import { api } from './api.js';
import { field, h, uniqueId } from './dom.js';

export interface Target {
  tool?: string;
  workflow?: string;
  inputs: Record<string, unknown>;
}

interface KeyRecord {
  id: string;
  name: string;
  type: string;
  scopes: string[];
  revoked_at: string | null;
  expires_at: string | null;
}

/** `tool secret-scan`, `workflow wf_…` (by the name when known). */
export function targetLabel(target: Target, workflowNames: Map<string, string>): string {
  return target.tool !== undefined ? `tool ${target.tool}` : `workflow ${workflowNames.get(target.workflow!) ?? target.workflow}`;
}

/** Where a run the target started is shown: a workflow run's graph, a tool's execution. */
export function runHref(target: Target, executionId: string): string {
  return target.workflow !== undefined ? `#/runs/${executionId}` : `#/executions/${executionId}`;
}

/** The account's workflows by id, for naming targets. */
export async function workflowNames(): Promise<Map<string, string>> {
  const { workflows } = await api<{ workflows: { id: string; name: string }[] }>('GET', '/v1/workflows?limit=100');
  return new Map(workflows.map((w) => [w.id, w.name]));
}

/** Fields for a target: its kind, a tool id or workflow (suggested from the catalogue and the account's workflows), literal inputs as JSON. */
export async function targetFields(names: Map<string, string>): Promise<{ element: HTMLElement; read(): Target }> {
  const { tools } = await api<{ tools: { id: string; kind?: string }[] }>('GET', '/v1/tools?limit=100');
  const kind = h('select', {}, h('option', { value: 'workflow' }, 'workflow'), h('option', { value: 'tool' }, 'tool'));
  const listId = uniqueId('targets');
  const options = h('datalist', { id: listId });
  const showOptions = () =>
    options.replaceChildren(...(kind.value === 'tool' ? tools.filter((tool) => tool.kind !== 'workflow').map((tool) => h('option', { value: tool.id })) : [...names.values()].map((name) => h('option', { value: name }))));
  kind.addEventListener('change', showOptions);
  showOptions();
  const id = h('input', { type: 'text', required: true, list: listId, autocomplete: 'off', maxlength: 128 });
  const inputs = h('textarea', { rows: 3, spellcheck: 'false' });
  inputs.value = '{}';
  return {
    element: h('div', { class: 'row' }, field('Target', kind), field('Tool or workflow', id, 'A tool id; a workflow by name or id.'), field('Target inputs (JSON)', inputs, 'Literal inputs, as an object.')),
    read: () => {
      inputs.setCustomValidity('');
      let literal: unknown;
      try {
        literal = JSON.parse(inputs.value || '{}');
      } catch {
        literal = undefined;
      }
      if (!literal || typeof literal !== 'object' || Array.isArray(literal)) {
        inputs.setCustomValidity('The target inputs must be a JSON object');
        inputs.reportValidity();
        throw new Error('The target inputs must be a JSON object');
      }
      return { [kind.value]: id.value.trim(), inputs: literal as Record<string, unknown> };
    },
  };
}

const usable = (key: KeyRecord, now = Date.now()) => (!key.revoked_at || Date.parse(key.revoked_at) > now) && (!key.expires_at || Date.parse(key.expires_at) > now);

/**
 * The API key a schedule or trigger runs as (docs/orchestration.md#the-key-it-runs-as): a console
 * session ends, so it names one of the account's keys that may manage orchestration.
 */
export async function runAsField(): Promise<{ element: HTMLElement; read(): string | undefined }> {
  const { keys } = await api<{ keys: KeyRecord[] }>('GET', '/v1/keys?limit=100');
  const candidates = keys.filter((key) => key.type !== 'temporary' && key.scopes.includes('orchestration:manage') && usable(key));
  // Empty: the service makes a key for it (docs/orchestration.md#the-key-it-runs-as).
  const select = h(
    'select',
    {},
    h('option', { value: '' }, 'A key of its own, made now'),
    ...candidates.map((key) => h('option', { value: key.id }, `${key.name} (${key.type}, ${key.id})`)),
  );
  return {
    element: field('Runs as key', select, 'Its scopes, tool allowlist, limits and quota apply to every run; revoking it stops them. A key of its own can start runs and read them, within this session’s rights, and is revoked when this is deleted.'),
    read: () => select.value || undefined,
  };
}
