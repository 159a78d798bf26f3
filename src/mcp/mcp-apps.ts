import { createHash } from 'node:crypto';
import { canUseTool, type Principal } from '../identity/principal';
import type { ResourceContents, ResourceDefinition, ResourceHandler } from '../tools/sdk/resources-and-prompts';

/** The MCP Apps extension's names (`@modelcontextprotocol/ext-apps`; test/mcp-apps.e2e-spec.ts holds them to the package). */
export const MCP_APP_MIME_TYPE = 'text/html;profile=mcp-app';
const LEGACY_RESOURCE_URI_META_KEY = 'ui/resourceUri';
const APPS_PROTOCOL_VERSION = '2026-01-26';

export const FINDINGS_VIEW_URI = 'ui://tool-orchestration-service/findings';

/** The tools whose results are findings people would rather look at than read. */
const FINDINGS_TOOLS: ReadonlySet<string> = new Set(['sast-scan', 'secret-scan', 'iac-scan', 'dependency-check', 'image-scan']);

/** Whether a resource is for this key: the findings view only when it may use one of the tools rendered in it; any other resource, yes. */
export function viewVisibleTo(principal: Principal, uri: string): boolean {
  return uri !== FINDINGS_VIEW_URI || [...FINDINGS_TOOLS].some((toolId) => canUseTool(principal, toolId));
}

/** What a tool's `tools/list` entry adds to its `_meta`: the view its results render in, for hosts with the extension; others ignore it. */
export function appMetaOf(toolId: string): Record<string, unknown> {
  return FINDINGS_TOOLS.has(toolId) ? { ui: { resourceUri: FINDINGS_VIEW_URI }, [LEGACY_RESOURCE_URI_META_KEY]: FINDINGS_VIEW_URI } : {};
}

/**
 * The view (runs in the host's sandboxed iframe): the extension's handshake over postMessage
 * (`ui/initialize`, then `ui/notifications/initialized`), then each `ui/notifications/tool-result`
 * rendered as a table of its findings. Text goes in with textContent only, never as markup: a
 * finding's message is the scanned code's text.
 */
const SCRIPT = `(() => {
  const LISTS = ['findings', 'vulnerabilities'];
  const pending = new Map();
  let nextId = 1;
  const send = (message) => window.parent.postMessage({ jsonrpc: '2.0', ...message }, '*');
  const request = (method, params) => new Promise((resolve) => { const id = nextId++; pending.set(id, resolve); send({ id, method, params }); });
  const el = (tag, text) => { const node = document.createElement(tag); if (text !== undefined) node.textContent = String(text); return node; };
  const first = (item, names) => { for (const name of names) if (item[name] !== undefined && item[name] !== null && item[name] !== '') return item[name]; return ''; };
  const where = (item) => {
    const place = first(item, ['file', 'path', 'resource', 'package', 'name']);
    const line = first(item, ['line', 'start_line']);
    const version = first(item, ['version', 'installed_version']);
    return [place, line && ':' + line, version && '@' + version].join('');
  };
  function render(result) {
    const root = document.getElementById('root');
    root.replaceChildren();
    const data = (result && result.structuredContent) || {};
    if (result && result.isError) { root.append(el('p', 'The tool failed: ' + ((result.content || [])[0] || {}).text)); return; }
    const key = LISTS.find((name) => Array.isArray(data[name]));
    const items = key ? data[key] : [];
    const counts = {};
    for (const item of items) { const s = String(item.severity || 'unknown').toLowerCase(); counts[s] = (counts[s] || 0) + 1; }
    root.append(el('h1', items.length === 0 ? 'No ' + (key || 'findings') : items.length + ' ' + (key || 'findings')));
    root.append(el('p', Object.entries(counts).map(([s, n]) => n + ' ' + s).join(' · ')));
    if (items.length === 0) return;
    const table = el('table');
    const head = el('tr');
    for (const title of ['Severity', 'Rule', 'Where', 'Message']) head.append(el('th', title));
    table.append(head);
    for (const item of items) {
      const row = el('tr');
      row.className = 'severity-' + String(item.severity || 'unknown').toLowerCase();
      row.append(el('td', item.severity || ''), el('td', first(item, ['rule', 'rule_id', 'check_id', 'id', 'vulnerability_id'])), el('td', where(item)), el('td', first(item, ['message', 'title', 'summary', 'description'])));
      table.append(row);
    }
    root.append(table);
  }
  window.addEventListener('message', (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== '2.0') return;
    if (message.method === undefined && pending.has(message.id)) { pending.get(message.id)(message.result); pending.delete(message.id); return; }
    if (message.method === 'ui/notifications/tool-result') render(message.params);
  });
  request('ui/initialize', { appInfo: { name: 'tos-findings', version: '1.0.0' }, appCapabilities: {}, protocolVersion: '${APPS_PROTOCOL_VERSION}' })
    .then(() => send({ method: 'ui/notifications/initialized', params: {} }));
})();`;

const STYLE = `body{font:13px system-ui,sans-serif;margin:8px}h1{font-size:15px;margin:0 0 4px}table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:3px 6px;border-bottom:1px solid #ddd;vertical-align:top}tr.severity-critical td:first-child,tr.severity-high td:first-child{color:#b00020;font-weight:600}`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** Nothing leaves the view: no fetch, no images, fonts, frames or forms; only its own inline script and style, by hash. */
export const FINDINGS_VIEW_CSP = `default-src 'none'; script-src ${hash(SCRIPT)}; style-src ${hash(STYLE)}; img-src 'none'; connect-src 'none'; frame-src 'none'; form-action 'none'; base-uri 'none'`;

const HTML = `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${FINDINGS_VIEW_CSP}"><title>Findings</title><style>${STYLE}</style></head><body><div id="root">Waiting for the result…</div><script>${SCRIPT}</script></body></html>`;

/** The view as an MCP resource (McpLibrary lists and reads it like a module's fixed resource). */
export const FINDINGS_VIEW: { definition: ResourceDefinition; handler: ResourceHandler } = {
  definition: { uri: FINDINGS_VIEW_URI, name: 'findings-view', title: 'Findings', description: 'An MCP App view of a scanner result: its findings by severity, rule, place and message.', mimeType: MCP_APP_MIME_TYPE },
  handler: {
    // No domains in `csp`: the host's sandbox allows the view no network at all (the extension's secure default).
    read: async (uri): Promise<ResourceContents[]> => [{ uri, mimeType: MCP_APP_MIME_TYPE, text: HTML, _meta: { ui: { csp: {}, prefersBorder: true } } }],
  },
};
