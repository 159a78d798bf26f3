/**
 * /v1/mcp serves MCP 2026-07-28 beside the 2025 revisions: the official SDK v2 client (which
 * discovers and speaks 2026-07-28) and the SDK v1 client (which initializes at 2025-11-25) on one
 * endpoint, the 2026 validation ladder on raw requests, and the library both revisions share:
 * tool documentation and executions as resources, the product prompts, each key seeing only its
 * own account.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpModernEndpoint } from '../src/mcp/mcp-modern-endpoint';
import { useTestApp } from './support/app';
import { DATABASE_MODES } from './support/databases';

const MODERN = '2026-07-28';
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };

describe('MCP revisions and library', () => {
  const suite = useTestApp(DATABASE_MODES[0]);
  let url: URL;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    url = new URL(`${(await suite.t.app.getUrl()).replace('[::1]', '127.0.0.1')}/v1/mcp`);
  });
  afterAll(async () => {
    for (const close of closers) await close();
  });

  const headers = (key: string) => ({ authorization: `Bearer ${key}` });
  const modernClient = async (key: string) => {
    // The v2 client speaks 2025 unless asked to negotiate: `auto` probes with server/discover.
    const client = new ClientV2({ name: 'e2e-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new TransportV2(url, { requestInit: { headers: headers(key) } }));
    closers.push(() => client.close());
    return client;
  };
  const legacyClient = async (key: string) => {
    const client = new ClientV1({ name: 'e2e-v1', version: '1.0.0' });
    await client.connect(new TransportV1(url, { requestInit: { headers: headers(key) } }));
    closers.push(() => client.close());
    return client;
  };
  /** A raw 2026-07-28 POST; `meta` replaces the envelope, `extra` adds headers. */
  const raw = async (key: string, method: string, params: Record<string, unknown>, extra: Record<string, string> = {}, meta: unknown = ENVELOPE) => {
    const answer = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': method, ...headers(key), ...extra },
      body: JSON.stringify({ jsonrpc: '2.0', id: 41, method, params: { ...params, ...(meta !== undefined && { _meta: meta }) } }),
    });
    return { status: answer.status, body: (await answer.json()) as { id: unknown; result?: any; error?: { code: number; message: string; data?: any } } };
  };

  it('serves the SDK v2 client at 2026-07-28 and the SDK v1 client at 2025-11-25 on the same endpoint, through the same runner', async () => {
    const modern = await modernClient(suite.acme.key);
    const legacy = await legacyClient(suite.acme.key);
    expect(modern.getNegotiatedProtocolVersion()).toBe(MODERN);
    expect(legacy.getServerVersion()).toMatchObject({ name: 'tool-orchestration-service' });

    const args = { data: { n: [1, 2, 3] }, expression: '$sum(n)' };
    const viaModern = await modern.callTool({ name: 'json-transform', arguments: args });
    expect(viaModern.structuredContent).toEqual({ result: 6 });
    const executionId = (viaModern._meta as { execution_id: string }).execution_id;
    const row = await suite.t.request({ method: 'GET', url: `/v1/executions/${executionId}`, key: suite.acme.key });
    expect(row.json()).toMatchObject({ tool_id: 'json-transform', status: 'success', result: { result: 6 } });
    // The same call from the 2025 client is answered from the cache the first one filled.
    const viaLegacy = await legacy.callTool({ name: 'json-transform', arguments: args });
    expect(viaLegacy._meta).toMatchObject({ execution_id: executionId, cache: { hit: true } });

    const modernNames = (await modern.listTools()).tools.map(({ name }) => name);
    const legacyNames = (await legacy.listTools()).tools.map(({ name }) => name);
    expect(modernNames).toContain('json-transform');
    expect(modernNames.slice(0, legacyNames.length)).toEqual(legacyNames);
  });

  it('holds the routing headers to the body (SEP-2243): Mcp-Name on every path, and Mcp-Param-* for inputs a tool mirrors', async () => {
    const executions = async () => (await suite.t.request({ method: 'GET', url: '/v1/executions?limit=1', key: suite.acme.key })).json().total;
    const before = await executions();
    const args = { data: { n: [1] }, expression: '$sum(n)' };
    // No Mcp-Name, or another name: refused before anything runs (the fast path leaves these to the SDK's entry).
    for (const extra of [{}, { 'mcp-name': 'health-check' }] as Record<string, string>[]) {
      const refused = await raw(suite.acme.key, 'tools/call', { name: 'json-transform', arguments: args }, extra);
      expect(refused).toMatchObject({ status: 400, body: { id: 41, error: { code: -32020 } } });
    }
    expect(await executions()).toBe(before);

    // The forge tools mirror owner and repo (x-mcp-header): a value in the body needs its header, equal once decoded.
    const { tools } = (await raw(suite.acme.key, 'tools/list', {})).body.result;
    expect(tools.find(({ name }: { name: string }) => name === 'vcs-get-pr').inputSchema.properties).toMatchObject({ owner: { 'x-mcp-header': 'Owner' }, repo: { 'x-mcp-header': 'Repo' } });
    const getPr = (headers: Record<string, string>) => raw(suite.acme.key, 'tools/call', { name: 'vcs-get-pr', arguments: { owner: 'acme', repo: 'shöp' } }, { 'mcp-name': 'vcs-get-pr', ...headers });
    const base64 = (text: string) => `=?base64?${Buffer.from(text).toString('base64')}?=`;
    const mismatch = (header: string) => ({ status: 400, body: { error: { code: -32020, data: { mismatch: { header } } } } });
    expect(await getPr({ 'mcp-param-owner': 'acme' })).toMatchObject(mismatch('Mcp-Param-Repo'));
    expect(await getPr({ 'mcp-param-owner': 'other', 'mcp-param-repo': base64('shöp') })).toMatchObject(mismatch('Mcp-Param-Owner'));
    expect(await getPr({ 'mcp-param-owner': 'acme', 'mcp-param-repo': '=?base64?c2j=?=' })).toMatchObject(mismatch('Mcp-Param-Repo'));
    // Agreeing headers pass to the tool's own validation (the pull request number is missing).
    const passed = await getPr({ 'mcp-param-owner': ' acme ', 'mcp-param-repo': base64('shöp') });
    expect(passed.status).toBe(200);
    expect(JSON.stringify(passed.body.result.content)).toMatch(/number/);

    // The SDK v2 client mirrors them itself, from the tools/list it read.
    const client = await modernClient(suite.acme.key);
    await client.listTools();
    const answer = await client.callTool({ name: 'vcs-get-pr', arguments: { owner: 'acme', repo: 'shop' } });
    expect(answer.isError).toBe(true);
    expect(JSON.stringify(answer.content)).toMatch(/number/);
  });

  it('answers a plain 2026-07-28 tools/call on its fast path exactly as the SDK path does', async () => {
    // Declaring extensions (none) sends the call through the SDK's Server; without, the fast path takes it.
    const viaSdk = { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': { extensions: {} } };
    const call = (name: string, args: object, meta: unknown) => raw(suite.acme.key, 'tools/call', { name, arguments: args }, { 'mcp-name': name, 'cache-control': 'no-cache' }, meta);
    const args = { data: { n: [4, 5] }, expression: '$sum(n)' };
    // The SDK's handler is what the fast path skips: it must see the second call only.
    const sdkHandler = (suite.t.app.get(McpModernEndpoint) as unknown as { handler: { fetch: (...args: unknown[]) => unknown } }).handler;
    const sdkCalls = jest.spyOn(sdkHandler, 'fetch');
    const fast = await call('json-transform', args, ENVELOPE);
    expect(sdkCalls).not.toHaveBeenCalled();
    const sdk = await call('json-transform', args, viaSdk);
    expect(sdkCalls).toHaveBeenCalledTimes(1);
    sdkCalls.mockRestore();
    const comparable = ({ status, body }: Awaited<ReturnType<typeof call>>) => {
      const { execution_id, timing, ...about } = body.result._meta;
      return { status, body: { ...body, result: { ...body.result, _meta: { ...about, execution_id: typeof execution_id, timing: Object.keys(timing) } } } };
    };
    expect(comparable(fast)).toEqual(comparable(sdk));
    expect(fast.body.result).toMatchObject({ resultType: 'complete', structuredContent: { result: 9 }, _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'tool-orchestration-service' } } });
    // Failures too: an unknown tool in band, invalid arguments as an error result.
    expect(await call('no-such-tool', {}, ENVELOPE)).toEqual(await call('no-such-tool', {}, viaSdk));
    const invalid = [await call('json-transform', { expression: 7 }, ENVELOPE), await call('json-transform', { expression: 7 }, viaSdk)];
    expect(invalid[0]).toEqual(invalid[1]);
    expect(invalid[0].body.result.isError).toBe(true);
  });

  it('answers the 2026-07-28 validation ladder with HTTP 400, the request id and the spec codes', async () => {
    const missing = await raw(suite.acme.key, 'tools/list', {}, {}, { 'io.modelcontextprotocol/protocolVersion': MODERN });
    expect(missing).toMatchObject({ status: 400, body: { id: 41, error: { code: -32602 } } });

    const unsupported = await raw(suite.acme.key, 'tools/list', {}, { 'mcp-protocol-version': '2099-01-01' }, { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' });
    expect(unsupported).toMatchObject({ status: 400, body: { id: 41, error: { code: -32022 } } });
    expect(unsupported.body.error!.data.supported).toContain(MODERN);

    const mismatch = await raw(suite.acme.key, 'tools/list', {}, { 'mcp-method': 'prompts/list' });
    expect(mismatch).toMatchObject({ status: 400, body: { id: 41, error: { code: -32020 } } });

    const unknown = await raw(suite.acme.key, 'ping', {});
    expect(unknown.body).toMatchObject({ id: 41, error: { code: -32601 } });

    const discovered = await raw(suite.acme.key, 'server/discover', {});
    expect(discovered.body.result).toMatchObject({ supportedVersions: expect.arrayContaining([MODERN]), capabilities: { tools: {}, resources: {}, prompts: {} } });

    const listed = await raw(suite.acme.key, 'tools/list', {});
    expect(listed.body.result).toMatchObject({ ttlMs: expect.any(Number), cacheScope: 'private' });
  });

  it("serves each tool's documentation and the key's own executions as resources, and nothing of another account", async () => {
    const restricted = await suite.t.createKey(suite.acme.id, { name: 'json-only', type: 'service', tool_ids: ['json-transform'] });
    const client = await modernClient(restricted);
    const { resources } = await client.listResources();
    // Its tool's documentation, and the execution view, as the key may read executions (docs/mcp.md#execution-status).
    expect(resources.map(({ uri }) => uri)).toEqual(['tos://tools/json-transform/docs', 'ui://tool-orchestration-service/execution']);
    const docs = await client.readResource({ uri: 'tos://tools/json-transform/docs' });
    expect(docs.contents[0]).toMatchObject({ mimeType: 'text/markdown', text: expect.stringContaining('# JSON Transform (`json-transform`)') });
    await expect(client.readResource({ uri: 'tos://tools/health-check/docs' })).rejects.toThrow(/Resource not found/);

    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates).toContainEqual(expect.objectContaining({ uriTemplate: 'tos://executions/{execution_id}' }));
    const called = await client.callTool({ name: 'json-transform', arguments: { data: {}, expression: '"hello"' } });
    const id = (called._meta as { execution_id: string }).execution_id;
    const read = await client.readResource({ uri: `tos://executions/${id}` });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ id, tool_id: 'json-transform', status: 'success', result: { result: 'hello' } });

    const other = await suite.t.createAccount('mcp-other');
    // 2026-07-28 routing headers: Mcp-Name carries the URI a resources/read names.
    const stranger = await raw(other.key, 'resources/read', { uri: `tos://executions/${id}` }, { 'mcp-name': `tos://executions/${id}` });
    expect(stranger.body.error).toMatchObject({ code: -32602, data: { uri: `tos://executions/${id}` } });
    const nowhere = await raw(other.key, 'resources/read', { uri: 'tos://nowhere' }, { 'mcp-name': 'tos://nowhere' });
    expect(nowhere.body.error).toMatchObject({ code: -32602, data: { uri: 'tos://nowhere' } });
  });

  it('offers prompts that chain tools, with their arguments checked, in both revisions', async () => {
    const legacy = await legacyClient(suite.acme.key);
    const { prompts } = await legacy.listPrompts();
    expect(prompts.map(({ name }) => name)).toEqual(['investigate-alert', 'security-review', 'triage-failing-workflow']);
    const triage = await legacy.getPrompt({ name: 'triage-failing-workflow', arguments: { owner: 'acme', repo: 'shop', workflow: 'ci.yml' } });
    const text = (triage.messages[0].content as { text: string }).text;
    expect(text).toContain('vcs-workflow-status with owner "acme", repo "shop", workflow "ci.yml"');
    await expect(legacy.getPrompt({ name: 'triage-failing-workflow', arguments: { owner: 'acme' } })).rejects.toThrow(/needs the argument 'repo'/);

    const modern = await modernClient(suite.acme.key);
    const review = await modern.getPrompt({ name: 'security-review', arguments: { workspace: 'ws_123' } });
    expect((review.messages[0].content as { text: string }).text).toContain('sast-scan, secret-scan, dependency-check and license-check on workspace "ws_123"');
    await expect(modern.getPrompt({ name: 'no-such-prompt' })).rejects.toThrow(/Unknown prompt/);
  });

  it("lets a prompt ask its caller (2026-07-28 with elicitation): triage asks what it may change, and its answer shapes the steps", async () => {
    const triage = { name: 'triage-failing-workflow', arguments: { owner: 'acme', repo: 'shop', workflow: 'ci.yml' } };
    const stepsOf = (result: { messages: { content: unknown }[] }) => (result.messages[0].content as { text: string }).text;
    const asked: string[] = [];
    const client = new ClientV2({ name: 'e2e-v2-forms', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler('elicitation/create', async ({ params }) => {
      asked.push(params.message);
      return { action: 'accept', content: { comment: true, rerun: false } };
    });
    await client.connect(new TransportV2(url, { requestInit: { headers: headers(suite.acme.key) } }));
    closers.push(() => client.close());
    const allowed = stepsOf(await client.getPrompt(triage));
    expect(asked).toEqual(['Besides reading the run, its logs and the pull request, what may the assistant do?']);
    expect(allowed).toContain('post the diagnosis on the pull request with vcs-comment-pr (owner "acme", repo "shop")');
    expect(allowed).not.toContain('vcs-workflow on');

    // Raw: the question and its signed state; a state altered, or brought to other arguments, is refused.
    const capable = { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
    const first = await raw(suite.acme.key, 'prompts/get', triage, { 'mcp-name': triage.name }, capable);
    expect(first.body.result).toMatchObject({ resultType: 'input_required', inputRequests: { allowed_actions: { method: 'elicitation/create' } }, requestState: expect.any(String) });
    const answered = (state: string, args = triage.arguments) =>
      raw(suite.acme.key, 'prompts/get', { ...triage, arguments: args, inputResponses: { allowed_actions: { action: 'accept', content: { rerun: true } } }, requestState: state }, { 'mcp-name': triage.name }, capable);
    const second = await answered(first.body.result.requestState);
    expect(second.body.result.messages[0].content.text).toContain('dispatch workflow "ci.yml" on its branch with vcs-workflow');
    expect((await answered(`${first.body.result.requestState}x`)).body.error).toMatchObject({ code: -32602, message: /not issued by this service or was altered/ });
    expect((await answered(first.body.result.requestState, { ...triage.arguments, repo: 'other' })).body.error).toMatchObject({ code: -32602, message: /belongs to another call/ });

    // A declined form, a client that cannot show one, and a 2025 client: reading only, and nothing asked.
    const declined = await raw(suite.acme.key, 'prompts/get', { ...triage, inputResponses: { allowed_actions: { action: 'decline' } }, requestState: first.body.result.requestState }, { 'mcp-name': triage.name }, capable);
    expect(declined.body.result.messages[0].content.text).toContain('Do not re-run or comment anything without asking.');
    const formless = await raw(suite.acme.key, 'prompts/get', triage, { 'mcp-name': triage.name });
    expect(formless.body.result).toMatchObject({ resultType: 'complete' });
    expect(formless.body.result.messages[0].content.text).toContain('Do not re-run or comment anything without asking.');
    const legacy = await legacyClient(suite.acme.key);
    expect(stepsOf(await legacy.getPrompt(triage))).toContain('Do not re-run or comment anything without asking.');
  });
});
