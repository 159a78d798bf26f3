import { createHash } from 'node:crypto';
import { canUseTool, type Principal } from '../identity/principal';
import type { ResourceContents, ResourceDefinition, ResourceHandler } from '../tools/sdk/resources-and-prompts';
import { EXECUTION_STATUS_TOOL, executionUri } from './mcp-execution-uri';

/** The MCP Apps extension's names (`@modelcontextprotocol/ext-apps`; test/mcp-apps.e2e-spec.ts holds them to the package). */
export const MCP_APP_MIME_TYPE = 'text/html;profile=mcp-app';
const LEGACY_RESOURCE_URI_META_KEY = 'ui/resourceUri';
const APPS_PROTOCOL_VERSION = '2026-01-26';
const URI_PREFIX = 'ui://tool-orchestration-service/';

/**
 * The view's frame (runs in the host's sandboxed iframe): the extension's handshake over postMessage
 * (`ui/initialize`, then `ui/notifications/initialized`), then each `ui/notifications/tool-result`
 * handed to the view's `render(data, root)`, or its failure shown. Text goes in with textContent
 * only, never as markup: results carry scanned code and test output.
 */
const frameScript = (name: string, render: string) => `(() => {
  const pending = new Map();
  let nextId = 1;
  const send = (message) => window.parent.postMessage({ jsonrpc: '2.0', ...message }, '*');
  const request = (method, params) => new Promise((resolve) => { const id = nextId++; pending.set(id, resolve); send({ id, method, params }); });
  const el = (tag, text) => { const node = document.createElement(tag); if (text !== undefined) node.textContent = String(text); return node; };
  const first = (item, names) => { for (const name of names) if (item[name] !== undefined && item[name] !== null && item[name] !== '') return item[name]; return ''; };
  const table = (titles, rows) => {
    const node = el('table');
    const head = el('tr');
    for (const title of titles) head.append(el('th', title));
    node.append(head);
    for (const { cells, className } of rows) {
      const row = el('tr');
      if (className) row.className = className;
      for (const cell of cells) row.append(el('td', cell === null || cell === undefined ? '' : cell));
      node.append(row);
    }
    return node;
  };
  const render = ${render};
  function show(result) {
    const root = document.getElementById('root');
    root.replaceChildren();
    if (result && result.isError) { root.append(el('p', 'The tool failed: ' + ((result.content || [])[0] || {}).text)); return; }
    render((result && result.structuredContent) || {}, root);
  }
  window.addEventListener('message', (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== '2.0') return;
    if (message.method === undefined && pending.has(message.id)) { pending.get(message.id)(message.result); pending.delete(message.id); return; }
    if (message.method === 'ui/notifications/tool-result') show(message.params);
  });
  request('ui/initialize', { appInfo: { name: 'tos-${name}', version: '1.0.0' }, appCapabilities: {}, protocolVersion: '${APPS_PROTOCOL_VERSION}' })
    .then(() => send({ method: 'ui/notifications/initialized', params: {} }));
})();`;

/** Scanner results: their findings (or vulnerabilities) by severity, rule, place and message. */
const FINDINGS_RENDER = `(data, root) => {
  const key = ['findings', 'vulnerabilities'].find((name) => Array.isArray(data[name]));
  const items = key ? data[key] : [];
  const severity = (item) => String(item.severity || 'unknown').toLowerCase();
  const counts = {};
  for (const item of items) counts[severity(item)] = (counts[severity(item)] || 0) + 1;
  const where = (item) => {
    const place = first(item, ['file', 'path', 'resource', 'package', 'name']);
    const line = first(item, ['line', 'start_line']);
    const version = first(item, ['version', 'installed_version']);
    return [place, line && ':' + line, version && '@' + version].join('');
  };
  root.append(el('h1', items.length === 0 ? 'No ' + (key || 'findings') : items.length + ' ' + (key || 'findings')));
  root.append(el('p', Object.entries(counts).map(([s, n]) => n + ' ' + s).join(' · ')));
  if (items.length === 0) return;
  root.append(table(['Severity', 'Rule', 'Where', 'Message'], items.map((item) => ({
    className: 'severity-' + severity(item),
    cells: [item.severity || '', first(item, ['rule', 'rule_id', 'check_id', 'id', 'vulnerability_id']), where(item), first(item, ['message', 'title', 'summary', 'description'])],
  }))));
}`;

/** code-quality: the grade, the totals, and each file's grade and measures (worst first, as the tool orders them). */
const QUALITY_RENDER = `(data, root) => {
  const summary = data.summary || {};
  const files = Array.isArray(data.files) ? data.files : [];
  root.append(el('h1', 'Grade ' + (summary.grade || '?') + ' · maintainability ' + (summary.maintainability ?? '?')));
  root.append(el('p', [summary.files + ' files', summary.functions + ' functions', summary.sloc + ' lines of code', summary.duplicated_lines + ' duplicated lines (' + summary.duplication_percent + '%)'].join(' · ')));
  if (summary.grades) root.append(el('p', Object.entries(summary.grades).map(([grade, n]) => n + ' ' + grade).join(' · ')));
  root.append(table(['Grade', 'File', 'Maintainability', 'Lines', 'Max cyclomatic', 'Max cognitive', 'Duplicated'], files.map((file) => ({
    className: 'grade-' + String(file.grade).toLowerCase(),
    cells: [file.grade, file.file, file.maintainability, file.sloc, (file.cyclomatic || {}).max, (file.cognitive || {}).max, file.duplicated_lines],
  }))));
}`;

/** test-report: passed or how many failed, the totals and coverage, each failure, the flaky tests. */
const TESTS_RENDER = `(data, root) => {
  const totals = data.totals || {};
  const broken = (totals.failed || 0) + (totals.errors || 0);
  root.append(el('h1', broken === 0 ? 'All ' + totals.tests + ' tests passed' : broken + ' of ' + totals.tests + ' tests failed'));
  root.append(el('p', ['passed', 'failed', 'errors', 'skipped', 'flaky'].map((name) => (totals[name] || 0) + ' ' + name).join(' · ') + ' · ' + ((totals.duration_ms || 0) / 1000).toFixed(1) + ' s'));
  const lines = data.coverage && data.coverage.lines;
  if (lines) root.append(el('p', 'Line coverage ' + lines.percent + '% (' + lines.covered + ' of ' + lines.total + ')'));
  const failures = Array.isArray(data.failures) ? data.failures : [];
  if (failures.length > 0) root.append(table(['Kind', 'Suite', 'Test', 'Message'], failures.map((f) => ({ className: 'severity-high', cells: [f.kind, f.suite, f.name, f.message] }))));
  const flaky = Array.isArray(data.flaky) ? data.flaky : [];
  if (flaky.length > 0) {
    root.append(el('h2', 'Flaky'));
    root.append(table(['Suite', 'Test', 'Attempts', 'Failed attempts'], flaky.map((f) => ({ cells: [f.suite, f.name, f.attempts, f.failed_attempts] }))));
  }
}`;

/** performance-profiling: throughput, latency percentiles, and the answers by status class. */
const LOAD_RENDER = `(data, root) => {
  const latency = data.latency_ms || {};
  root.append(el('h1', Math.round(data.requests_per_second || 0) + ' requests/s'));
  root.append(el('p', (data.requests_total || 0) + ' requests in ' + data.duration_seconds + ' s · ' + (data.non_2xx || 0) + ' not 2xx · ' + (data.errors || 0) + ' errors · ' + (data.timeouts || 0) + ' timeouts'));
  root.append(table(['Latency', 'ms'], ['p50', 'p90', 'p99', 'max', 'mean'].map((name) => ({ cells: [name, latency[name]] }))));
  root.append(table(['Status', 'Answers'], Object.entries(data.status_counts || {}).map(([status, n]) => ({ className: /^[45]/.test(status) ? 'severity-high' : '', cells: [status, n] }))));
}`;

/**
 * execution.status: the execution's status, progress and message, then its result or error. Until it
 * ends, the view reads the execution again each second (resources/read, through the host: the view
 * itself may reach nothing) and shows what changed; it stops when the host does not answer.
 */
const EXECUTION_RENDER = `(data, root) => {
  const progress = Math.max(0, Math.min(100, Number(data.progress) || 0));
  root.append(el('h1', (data.tool_id || 'Execution') + ' · ' + (data.status || 'unknown')));
  const bar = el('progress');
  bar.max = 100;
  bar.value = progress;
  bar.setAttribute('aria-label', 'Progress');
  root.append(bar);
  root.append(el('p', Math.round(progress) + '%' + (data.progress_message ? ' · ' + data.progress_message : '')));
  root.append(el('p', [data.id, data.started_at && 'started ' + data.started_at, data.duration_ms !== undefined && data.duration_ms !== null && (data.duration_ms / 1000).toFixed(1) + ' s'].filter(Boolean).join(' · ')));
  if (data.status === 'input_required') root.append(el('p', 'Waiting for input: ' + Object.values(data.input_requests || {}).map((asked) => asked.message).join('; ')));
  if (data.error) root.append(el('p', 'Error ' + data.error.code + ': ' + data.error.message));
  if (data.result) root.append(el('pre', JSON.stringify(data.result, null, 2).slice(0, 20000)));
  if (['success', 'error', 'cancelled'].includes(data.status) || !data.id) return;
  setTimeout(() => request('resources/read', { uri: '${executionUri('')}' + data.id }).then((answer) => {
    const text = answer && answer.contents && answer.contents[0] && answer.contents[0].text;
    if (!text) { root.append(el('p', 'Live updates stopped: the host did not answer.')); return; }
    root.replaceChildren();
    render(JSON.parse(text), root);
  }), 1000);
}`;

const STYLE = `body{font:13px system-ui,sans-serif;margin:8px}h1{font-size:15px;margin:0 0 4px}h2{font-size:14px;margin:12px 0 4px}table{border-collapse:collapse;width:100%;margin-top:6px}th,td{text-align:left;padding:3px 6px;border-bottom:1px solid #ddd;vertical-align:top}tr.severity-critical td:first-child,tr.severity-high td:first-child,tr.grade-d td:first-child,tr.grade-f td:first-child{color:#b00020;font-weight:600}`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** An MCP App view: a `ui://` resource, and the tools whose results it renders. */
interface AppView {
  uri: string;
  tools: ReadonlySet<string>;
  /** Whether the key has any use for the view. */
  visibleTo: (principal: Principal) => boolean;
  resource: { definition: ResourceDefinition; handler: ResourceHandler };
}

function appView(name: string, title: string, description: string, tools: string[], render: string, visibleTo = (principal: Principal) => tools.some((toolId) => canUseTool(principal, toolId))): AppView {
  const uri = `${URI_PREFIX}${name}`;
  const script = frameScript(name, render);
  // Nothing leaves the view: no fetch, no images, fonts, frames or forms; only its own inline script and style, by hash.
  const csp = `default-src 'none'; script-src ${hash(script)}; style-src ${hash(STYLE)}; img-src 'none'; connect-src 'none'; frame-src 'none'; form-action 'none'; base-uri 'none'`;
  const html = `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${csp}"><title>${title}</title><style>${STYLE}</style></head><body><div id="root">Waiting for the result…</div><script>${script}</script></body></html>`;
  return {
    uri,
    tools: new Set(tools),
    visibleTo,
    resource: {
      definition: { uri, name: `${name}-view`, title, description, mimeType: MCP_APP_MIME_TYPE },
      handler: {
        // No domains in `csp`: the host's sandbox allows the view no network at all (the extension's secure default).
        read: async (read): Promise<ResourceContents[]> => [{ uri: read, mimeType: MCP_APP_MIME_TYPE, text: html, _meta: { ui: { csp: {}, prefersBorder: true } } }],
      },
    },
  };
}

/** The tools whose results people would rather look at than read, each with its view. */
export const APP_VIEWS: readonly AppView[] = [
  appView('findings', 'Findings', 'An MCP App view of a scanner result: its findings by severity, rule, place and message.', ['sast-scan', 'secret-scan', 'iac-scan', 'dependency-check', 'image-scan'], FINDINGS_RENDER),
  appView('code-quality', 'Code quality', 'An MCP App view of a code-quality result: the grade, totals and each file’s measures.', ['code-quality'], QUALITY_RENDER),
  appView('test-report', 'Test report', 'An MCP App view of a test-report result: totals, coverage, failures and flaky tests.', ['test-report'], TESTS_RENDER),
  appView('load-test', 'Load test', 'An MCP App view of a performance-profiling result: throughput, latency percentiles and answers by status.', ['performance-profiling'], LOAD_RENDER),
  appView('execution', 'Execution', 'An MCP App view of an execution: status and progress, kept live until it ends, then its result or error.', [EXECUTION_STATUS_TOOL], EXECUTION_RENDER, (principal) =>
    principal.scopes.has('executions:read'),
  ),
];

const VIEW_OF_TOOL = new Map(APP_VIEWS.flatMap((view) => [...view.tools].map((toolId) => [toolId, view] as const)));
const VIEW_BY_URI = new Map(APP_VIEWS.map((view) => [view.uri, view] as const));

/** Whether a resource is for this key: a view only when it has a use for it (may use one of the tools rendered in it); any other resource, yes. */
export function viewVisibleTo(principal: Principal, uri: string): boolean {
  const view = VIEW_BY_URI.get(uri);
  return !view || view.visibleTo(principal);
}

/** What a tool's `tools/list` entry adds to its `_meta`: the view its results render in, for hosts with the extension; others ignore it. */
export function appMetaOf(toolId: string): Record<string, unknown> {
  const view = VIEW_OF_TOOL.get(toolId);
  return view ? { ui: { resourceUri: view.uri }, [LEGACY_RESOURCE_URI_META_KEY]: view.uri } : {};
}
