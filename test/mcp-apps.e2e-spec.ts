/**
 * MCP Apps (the io.modelcontextprotocol/ui extension, `@modelcontextprotocol/ext-apps`): the
 * scanner tools declare the findings view in `tools/list` (code-quality, test-report and
 * performance-profiling views of their own), each view is a `ui://` resource, and
 * headless Chromium, playing a host, renders a real secret-scan result in it (sandboxed iframe,
 * the extension's postMessage handshake) with no request leaving the page. Hosts without the
 * extension get the structured result REST gives.
 */
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { importEsm } from '@tos/sdk';
import { useTestApp } from './support/app';
import { launchChromium, describeWithChromium, watchedContext } from './support/console-browser';
import { describeEachEngine } from './support/engines';
import { until } from './support/poll';
import { TestToolsModule } from './support/test-tools.module';

const MODERN = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'e2e-apps', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const VIEW = 'ui://tool-orchestration-service/findings';
const EXECUTION_VIEW = 'ui://tool-orchestration-service/execution';
// A token shaped like GitHub's (not a real one): secret-scan's provider rules find it.
/** The host page's side: answers ui/initialize, and once the view says it is initialized sends it the tool result. */
const HOST = `window.host = (viewHtml, toolResult) => new Promise((resolve) => {
  const frame = document.getElementById('view');
  const seen = [];
  window.addEventListener('message', (event) => {
    if (event.source !== frame.contentWindow) return;
    const message = event.data;
    seen.push(message.method || 'answer');
    const reply = (answer) => frame.contentWindow.postMessage({ jsonrpc: '2.0', ...answer }, '*');
    if (message.method === 'ui/initialize') {
      reply({ id: message.id, result: { protocolVersion: '2026-01-26', hostInfo: { name: 'e2e-host', version: '1.0.0' }, hostCapabilities: {}, hostContext: {} } });
    }
    // What a host does for a view's own requests: passes them to the view's server (here, the test's MCP client).
    if (message.method === 'resources/read') window.readResource(message.params.uri).then((result) => reply({ id: message.id, result }));
    if (message.method === 'ui/notifications/initialized') {
      reply({ method: 'ui/notifications/tool-result', params: toolResult });
      resolve(seen);
    }
  });
  frame.srcdoc = viewHtml;
});`;
/** The other views, each with the heading its tool's first catalogue example renders to (examples are real runs: test/tool-examples.e2e-spec.ts). */
const REPORT_VIEWS: Record<string, { uri: string; heading: RegExp; rows: (output: any) => number }> = {
  'code-quality': { uri: 'ui://tool-orchestration-service/code-quality', heading: /^Grade [A-F] · maintainability \d/, rows: (output) => output.files.length + 1 },
  'test-report': { uri: 'ui://tool-orchestration-service/test-report', heading: /^\d+ of \d+ tests failed$/, rows: (output) => output.failures.length + 1 + (output.flaky.length > 0 ? output.flaky.length + 1 : 0) },
  'performance-profiling': { uri: 'ui://tool-orchestration-service/load-test', heading: /^\d+ requests\/s$/, rows: (output) => 6 + Object.keys(output.status_counts).length + 1 },
};
const LEAKY = 'const client = connect({\n  token: "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngAbCdEf1234"\n});\n';

describeWithChromium('MCP Apps: the findings view', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  describeEachEngine('MCP Apps', (mode) => {
    const suite = useTestApp(mode, { extensions: [TestToolsModule] });

    const rpc = async (method: string, params: Record<string, unknown> = {}, key = suite.acme.key) => {
      const name = (params.name ?? params.uri) as string | undefined;
      const res = await suite.t.request({
        method: 'POST',
        url: '/v1/mcp',
        key,
        headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': method, ...(name && { 'mcp-name': name }) },
        payload: { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: ENVELOPE } },
      });
      expect(res.statusCode).toBe(200);
      return res.json().result;
    };

    it('declares each view on its own tools only, with the names the extension package uses', async () => {
      const apps = await importEsm<{ RESOURCE_MIME_TYPE: string; RESOURCE_URI_META_KEY: string }>(path.join(__dirname, '../node_modules/@modelcontextprotocol/ext-apps/dist/src/server/index.js'));
      const tools: Array<{ name: string; _meta: Record<string, any> }> = [];
      let cursor: string | undefined;
      do {
        const page = await rpc('tools/list', cursor ? { cursor } : {});
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      const withView = tools.filter((tool) => tool._meta.ui?.resourceUri === VIEW).map(({ name }) => name);
      expect(withView.sort()).toEqual(['dependency-check', 'iac-scan', 'image-scan', 'sast-scan', 'secret-scan']);
      const others = Object.fromEntries(tools.filter((tool) => tool._meta.ui && tool._meta.ui.resourceUri !== VIEW).map((tool) => [tool.name, tool._meta.ui.resourceUri]));
      expect(others).toEqual({ ...Object.fromEntries(Object.entries(REPORT_VIEWS).map(([tool, { uri }]) => [tool, uri])), 'execution.status': EXECUTION_VIEW });
      expect(tools.find(({ name }) => name === 'secret-scan')!._meta[apps.RESOURCE_URI_META_KEY]).toBe(VIEW);
      expect(tools.find(({ name }) => name === 'json-transform')!._meta.ui).toBeUndefined();

      const listed = (await rpc('resources/list')).resources.find(({ uri }: { uri: string }) => uri === VIEW);
      expect(listed).toMatchObject({ mimeType: apps.RESOURCE_MIME_TYPE });
      const [content] = (await rpc('resources/read', { uri: VIEW })).contents;
      expect(content).toMatchObject({ uri: VIEW, mimeType: apps.RESOURCE_MIME_TYPE, _meta: { ui: { csp: {} } } });
      expect(content.text).toContain("default-src 'none'");
      expect(content.text).not.toMatch(/https?:\/\//);

      // A key that may use no scanner has no use for the view: not listed, not found.
      const narrow = await suite.t.createKey(suite.acme.id, { name: 'json-only', type: 'service', tool_ids: ['json-transform'] });
      expect((await rpc('resources/list', {}, narrow)).resources.map(({ uri }: { uri: string }) => uri)).not.toContain(VIEW);
      const refused = await suite.t.request({
        method: 'POST',
        url: '/v1/mcp',
        key: narrow,
        headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': 'resources/read', 'mcp-name': VIEW },
        payload: { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: VIEW, _meta: ENVELOPE } },
      });
      expect(refused.json().error).toMatchObject({ code: -32602, data: { uri: VIEW } });
    });

    it('renders a real secret-scan result in Chromium, the host sandboxing it, with no request leaving', async () => {
      const result = await rpc('tools/call', { name: 'secret-scan', arguments: { content: LEAKY } });
      expect(result.isError).toBeUndefined();
      expect(result.structuredContent.findings.length).toBeGreaterThan(0);
      // What a host without the extension gets: the structured result REST gives.
      const rest = await suite.t.request({ method: 'POST', url: '/v1/tools/secret-scan/invoke', key: suite.acme.key, payload: { content: LEAKY } });
      expect(rest.json().result).toEqual(result.structuredContent);
      const [finding] = result.structuredContent.findings as Array<{ rule: string; message: string }>;

      const html = (await rpc('resources/read', { uri: VIEW })).contents[0].text as string;
      const requested: string[] = [];
      const pageErrors: string[] = [];
      const context = await watchedContext(browser, requested, pageErrors);
      try {
        const page = await context.newPage();
        const consoleErrors: string[] = [];
        const failed: string[] = [];
        context.on('requestfailed', (request) => failed.push(`${request.url()} ${request.failure()?.errorText}`));
        page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()));
        // The host: a sandboxed iframe (scripts only: no same origin, no forms, no popups) and the extension's host side of the handshake.
        await page.setContent(`<!doctype html><html><body><iframe id="view" sandbox="allow-scripts" style="width:1000px;height:600px"></iframe><script>${HOST}</script></body></html>`);
        const handshake = (await page.evaluate(`host(${JSON.stringify(html)}, ${JSON.stringify(result)})`)) as string[];
        expect(handshake).toEqual(['ui/initialize', 'ui/notifications/initialized']);
        const view = page.frameLocator('#view');
        await view.getByRole('heading', { name: `${result.structuredContent.findings.length} findings` }).waitFor({ timeout: 10_000 });
        await view.getByRole('cell', { name: finding.rule, exact: true }).first().waitFor();
        expect(await view.locator('tr').count()).toBe(result.structuredContent.findings.length + 1);
        // A finding's text is shown as text: the scanned code cannot add markup to the view.
        expect(await view.locator('script').count()).toBe(1);
        // The view's policy stops what a script in it might try: a fetch and an image to loopback never go out.
        const inView = page.frames().find((frame) => frame !== page.mainFrame())!;
        const blocked = await inView.evaluate(`new Promise((resolve) => {
          const violated = [];
          document.addEventListener('securitypolicyviolation', (event) => violated.push(event.effectiveDirective));
          const image = new Image();
          image.src = 'http://127.0.0.1:9/pixel.png';
          fetch('http://127.0.0.1:9/beacon').then(() => resolve(['fetched']), () => setTimeout(() => resolve(violated.sort()), 200));
        })`);
        expect(blocked).toEqual(['connect-src', 'img-src']);
        consoleErrors.splice(0); // the two refusals, reported on the console
        expect(pageErrors).toEqual([]);
        expect(consoleErrors).toEqual([]);
        // Chromium names the image it refused as a request, failed by the policy before it left; nothing else was asked for.
        expect(requested).toEqual(['http://127.0.0.1:9/pixel.png']);
        expect(failed).toEqual(['http://127.0.0.1:9/pixel.png csp']);
      } finally {
        await context.close();
      }
    });

    it.each(Object.entries(REPORT_VIEWS))('renders a %s result in its own view, with no request leaving', async (toolId, { uri, heading, rows }) => {
      const tool = await suite.t.request({ method: 'GET', url: `/v1/tools/${toolId}`, key: suite.acme.key });
      const output = tool.json().examples[0].output;
      const [content] = (await rpc('resources/read', { uri })).contents;
      expect(content).toMatchObject({ uri, mimeType: 'text/html;profile=mcp-app' });
      expect(content.text).toContain("default-src 'none'");
      const requested: string[] = [];
      const pageErrors: string[] = [];
      const context = await watchedContext(browser, requested, pageErrors);
      try {
        const page = await context.newPage();
        await page.setContent(`<!doctype html><html><body><iframe id="view" sandbox="allow-scripts" style="width:1000px;height:600px"></iframe><script>${HOST}</script></body></html>`);
        const result = { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
        expect(await page.evaluate(`host(${JSON.stringify(content.text)}, ${JSON.stringify(result)})`)).toEqual(['ui/initialize', 'ui/notifications/initialized']);
        const view = page.frameLocator('#view');
        await view.getByRole('heading', { name: heading }).waitFor({ timeout: 10_000 });
        expect(await view.locator('tr').count()).toBe(rows(output));
        expect(pageErrors).toEqual([]);
        expect(requested).toEqual([]);
      } finally {
        await context.close();
      }
    });

    it('keeps a running execution live in the execution view until it ends, reading it through the host', async () => {
      const started = await suite.t.request({ method: 'POST', url: '/v1/tools/test-sleep/invoke?async=true', key: suite.acme.key, payload: { ms: 4_000 } });
      expect(started.statusCode).toBe(202);
      const executionId = started.json().execution_id as string;
      await until('the execution running', async () => ((await suite.t.request({ method: 'GET', url: `/v1/executions/${executionId}`, key: suite.acme.key })).json().status === 'running' || undefined), 10_000);
      const result = await rpc('tools/call', { name: 'execution.status', arguments: { execution_id: executionId } });
      expect(result.isError).toBeUndefined();
      expect(result.structuredContent).toMatchObject({ id: executionId, tool_id: 'test-sleep', status: 'running' });
      const html = (await rpc('resources/read', { uri: EXECUTION_VIEW })).contents[0].text as string;
      const requested: string[] = [];
      const pageErrors: string[] = [];
      const context = await watchedContext(browser, requested, pageErrors);
      const read: Array<{ status: string; progress: number }> = [];
      try {
        const page = await context.newPage();
        await page.exposeFunction('readResource', async (uri: string) => {
          const answer = await rpc('resources/read', { uri });
          read.push(JSON.parse(answer.contents[0].text));
          return answer;
        });
        await page.setContent(`<!doctype html><html><body><iframe id="view" sandbox="allow-scripts" style="width:1000px;height:600px"></iframe><script>${HOST}</script></body></html>`);
        expect(await page.evaluate(`host(${JSON.stringify(html)}, ${JSON.stringify(result)})`)).toEqual(['ui/initialize', 'ui/notifications/initialized']);
        const view = page.frameLocator('#view');
        await view.getByRole('heading', { name: 'test-sleep · success' }).waitFor({ timeout: 20_000 });
        expect(await view.getByRole('progressbar', { name: 'Progress' }).getAttribute('value')).toBe('100');
        await view.getByText('"slept_ms": 4000').waitFor();
        // It followed the run: progress seen part way, then the end, after which it read no more.
        expect(read.some(({ status, progress }) => status === 'running' && progress > 0 && progress < 100)).toBe(true);
        expect(read.at(-1)).toMatchObject({ status: 'success', progress: 100 });
        const reads = read.length;
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        expect(read.length).toBe(reads);
        expect(pageErrors).toEqual([]);
        expect(requested).toEqual([]);
      } finally {
        await context.close();
      }
    }, 60_000);

    it('shows executions only with executions:read, and only the account’s own', async () => {
      const done = (await suite.t.request({ method: 'POST', url: '/v1/tools/test-sleep/invoke', key: suite.acme.key, payload: { ms: 0 } })).json().execution_id as string;
      const invoker = await suite.t.createKey(suite.acme.id, { name: 'no-executions-read', type: 'service', scopes: ['tools:read', 'tools:invoke'] });
      const listed = (await rpc('tools/list', {}, invoker)).tools.map(({ name }: { name: string }) => name);
      expect(listed).not.toContain('execution.status');
      const call = async (method: string, params: Record<string, unknown>, key: string) => {
        const name = (params.name ?? params.uri) as string;
        const res = await suite.t.request({
          method: 'POST',
          url: '/v1/mcp',
          key,
          headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': method, 'mcp-name': name },
          payload: { jsonrpc: '2.0', id: 3, method, params: { ...params, _meta: ENVELOPE } },
        });
        return res.json();
      };
      expect((await call('tools/call', { name: 'execution.status', arguments: { execution_id: done } }, invoker)).error.message).toContain("lacks the 'executions:read' scope");
      // The resource it reads needs the same scope as GET /v1/executions/{id}.
      expect((await call('resources/read', { uri: `tos://executions/${done}` }, invoker)).error.message).toContain("lacks the 'executions:read' scope");
      expect((await rpc('tools/call', { name: 'execution.status', arguments: { execution_id: done } })).structuredContent).toMatchObject({ id: done, status: 'success' });

      const other = await suite.t.createAccount('apps-other');
      const foreign = await rpc('tools/call', { name: 'execution.status', arguments: { execution_id: done } }, other.key);
      expect(foreign.isError).toBe(true);
      expect(JSON.parse(foreign.content[0].text).error.code).toBe('NOT_FOUND');
      const malformed = await rpc('tools/call', { name: 'execution.status', arguments: { execution_id: '../x' } });
      expect(JSON.parse(malformed.content[0].text).error).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'execution_id' } });
    });
  });
});
