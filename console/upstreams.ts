/**
 * Upstreams: MCP servers and OpenAPI operations the account serves as its own tools
 * (docs/console.md#upstreams, docs/upstreams.md) — register, test the connection, see what was
 * discovered, switch an upstream or one of its tools off and on, delete; and the audit log of all that.
 */
import { api, ApiError } from './api.js';
import { count, field, h, notify, table, when } from './dom.js';
import { upstreamAuditSection } from './upstream-audit.js';

interface UpstreamTool {
  name: string;
  id: string;
  enabled: boolean;
  operation?: string;
  description?: string;
}

interface Upstream {
  id: string;
  name: string;
  type: 'mcp' | 'openapi';
  url?: string;
  base_url?: string;
  enabled: boolean;
  tools: UpstreamTool[];
  status: { tool_count: number; last_contact_at: string | null; last_error: string | null; latency_ms: number | null };
}

const path = (id: string) => `/v1/upstreams/${encodeURIComponent(id)}`;

export async function upstreamsPage(main: HTMLElement): Promise<void> {
  const list = h('div');
  const audit = upstreamAuditSection();
  /** Runs a call and says `done`, or what went wrong; true when it went through. */
  const act = async (done: string, call: () => Promise<unknown>): Promise<boolean> => {
    try {
      await call();
      notify(done);
      await refresh();
      return true;
    } catch (error) {
      notify(error instanceof ApiError ? error.describe() : (error as Error).message, 'error');
      return false;
    }
  };
  const button = (label: string, kind: string, name: string, onClick: () => void) => h('button', { type: 'button', class: kind, 'aria-label': `${label} ${name}`, onClick }, label);

  /** Upstreams whose tool list is open: kept open across refreshes. */
  const open = new Set<string>();
  /** Each tool with its switch: an upstream's own name, the id callers use, what it is. */
  const toolsCell = (upstream: Upstream) => {
    const details = h(
      'details',
      { open: open.has(upstream.id) },
      h('summary', {}, `${count(upstream.tools.filter((tool) => tool.enabled).length, 'tool')} on of ${upstream.tools.length}`),
      h(
        'ul',
        { class: 'plain' },
        ...upstream.tools.map((tool) =>
          h(
            'li',
            {},
            h('code', {}, tool.id),
            tool.operation && ` (${tool.operation})`,
            tool.enabled ? '' : ' — off ',
            button(tool.enabled ? 'Turn off' : 'Turn on', 'secondary', tool.id, () =>
              void act(`${tool.id} turned ${tool.enabled ? 'off' : 'on'}`, () => api('PATCH', path(upstream.id), { tools_enabled: { [tool.name]: !tool.enabled } })),
            ),
          ),
        ),
      ),
    );
    details.addEventListener('toggle', () => void (details.open ? open.add(upstream.id) : open.delete(upstream.id)));
    return details;
  };

  const statusCell = ({ status, enabled }: Upstream) =>
    h(
      'div',
      {},
      h('span', { class: status.last_error ? 'status status-error' : enabled ? 'status status-success' : 'status' }, status.last_error ? 'unreachable' : enabled ? 'serving' : 'off'),
      status.last_error && h('div', { class: 'hint' }, status.last_error),
      h('div', { class: 'hint' }, `last contact ${when(status.last_contact_at)}${status.latency_ms === null ? '' : `, ${status.latency_ms} ms`}`),
    );

  const actions = (upstream: Upstream) =>
    h(
      'div',
      { class: 'actions' },
      button('Test connection', 'secondary', upstream.name, () =>
        void act(`Contacted ${upstream.name}`, async () => {
          const tested = await api<Upstream>('POST', `${path(upstream.id)}/refresh`, {});
          if (tested.status.last_error) throw new Error(`${upstream.name} could not be reached: ${tested.status.last_error}`);
        }),
      ),
      upstream.enabled
        ? button('Disable', 'secondary', upstream.name, () => void act(`Disabled ${upstream.name}`, () => api('PATCH', path(upstream.id), { enabled: false })))
        : button('Enable', 'secondary', upstream.name, () => void act(`Enabled ${upstream.name}`, () => api('PATCH', path(upstream.id), { enabled: true }))),
      button('Delete', 'danger', upstream.name, () => confirm(`Delete ${upstream.name}? Its tools leave the catalogue; workflows calling them fail.`) && void act(`Deleted ${upstream.name}`, () => api('DELETE', path(upstream.id)))),
    );

  const refresh = async () => {
    const [{ upstreams, max_upstreams }] = await Promise.all([api<{ upstreams: Upstream[]; max_upstreams: number }>('GET', '/v1/upstreams'), audit.refresh()]);
    list.replaceChildren(
      upstreams.length === 0
        ? h('p', {}, 'No upstreams yet.')
        : table(
            `${upstreams.length} of at most ${count(max_upstreams, 'upstream')}`,
            ['Name', 'Where', 'Tools', 'Status', 'Actions'],
            upstreams.map((upstream) => [h('strong', {}, upstream.name), h('div', {}, upstream.type === 'openapi' ? 'OpenAPI ' : 'MCP ', h('code', {}, upstream.url ?? upstream.base_url ?? '')), toolsCell(upstream), statusCell(upstream), actions(upstream)]),
          ),
    );
  };

  main.append(
    h('h1', {}, 'Upstreams'),
    h(
      'ul',
      { class: 'hint' },
      h('li', {}, 'An MCP server you run, or operations of a REST API with an OpenAPI document, served as this account’s tools: <name>.<tool>, with your keys, limits, cache and executions.'),
      h('li', {}, 'Credentials are secrets of this account (the Secrets page), named here and read at each call; every call goes through the service’s egress policy.'),
    ),
    registerForm((body) => act(`Registered ${String(body.name)}`, () => api('POST', '/v1/upstreams', body))),
    h('h2', {}, 'Your upstreams'),
    list,
    audit.element,
  );
  await refresh();
}

function registerForm(register: (body: Record<string, unknown>) => Promise<boolean>): HTMLFormElement {
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: 32, pattern: '[a-z][a-z0-9-]*', autocomplete: 'off', placeholder: 'pets' });
  const kind = h('select', { name: 'kind' }, h('option', { value: 'mcp' }, 'MCP server (Streamable HTTP)'), h('option', { value: 'openapi' }, 'OpenAPI operations'));
  const url = h('input', { type: 'text', inputmode: 'url', name: 'url', required: true, maxlength: 2048, autocomplete: 'off', placeholder: 'https://mcp.example.com/mcp' });
  const baseUrl = h('input', { type: 'text', inputmode: 'url', name: 'base_url', maxlength: 2048, autocomplete: 'off', placeholder: 'https://api.example.com' });
  const operations = h('input', { type: 'text', name: 'operations', maxlength: 4000, autocomplete: 'off', placeholder: 'listPets, GET /pets/{petId}' });
  const secret = h('input', { type: 'text', name: 'bearer_secret_name', maxlength: 128, autocomplete: 'off', placeholder: 'none' });
  const openapiOnly = h('div', { class: 'row', hidden: true }, field('Base URL', baseUrl, 'Where its operations are called.'), field('Operations', operations, 'operationIds or "METHOD /path", comma-separated.'));
  const urlField = field('URL', url, 'The MCP endpoint; for OpenAPI, the document’s URL (JSON or YAML).');
  kind.addEventListener('change', () => {
    openapiOnly.hidden = kind.value !== 'openapi';
    url.placeholder = kind.value === 'openapi' ? 'https://api.example.com/openapi.json' : 'https://mcp.example.com/mcp';
  });
  const form = h(
    'form',
    { class: 'panel', 'aria-labelledby': 'register-upstream-heading' },
    h('h2', { id: 'register-upstream-heading' }, 'Register an upstream'),
    h('div', { class: 'row' }, field('Name', name, 'Its tools are <name>.<tool>.'), field('Kind', kind)),
    urlField,
    openapiOnly,
    field('Bearer token secret', secret, 'The name of one of your secrets sent as Authorization: Bearer; empty for none.'),
    h('button', { type: 'submit' }, 'Register'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const auth = secret.value.trim() ? { bearer_secret_name: secret.value.trim() } : { none: true };
    const body =
      kind.value === 'openapi'
        ? { name: name.value, type: 'openapi', spec_url: url.value.trim(), base_url: baseUrl.value.trim(), operations: operations.value.split(',').map((op) => op.trim()).filter(Boolean), auth }
        : { name: name.value, transport: 'streamable-http', url: url.value.trim(), auth };
    // Kept as typed when the registration is refused, to correct it.
    void register(body).then((registered) => registered && form.reset());
  });
  return form;
}
