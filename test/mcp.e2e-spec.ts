/**
 * The MCP endpoint (POST /v1/mcp) driven by the official SDK client over Streamable HTTP against
 * the listening service: listing with paging, calls through the same runner, limits and cache
 * as REST, progress, cancellation (also from another API process), auth and the HTTP rules.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, LATEST_PROTOCOL_VERSION, McpError } from '@modelcontextprotocol/sdk/types.js';
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { McpEndpoint } from '../src/mcp/mcp-endpoint';
import { ToolRegistry } from '../src/tools/tool-registry';
import { describeEachEngine } from './support/engines';
import { freePort } from './support/free-port';
import { until } from './support/poll';
import { killProcess, ServiceProcess, startServiceProcess } from './support/processes';
import { TestToolsModule } from './support/test-tools.module';
import { useTestApp } from './support/app';

const PAGE_SIZE = 2;
const INSPECTOR = path.join(__dirname, '..', 'node_modules', '.bin', 'mcp-inspector');

describeEachEngine('MCP endpoint', (mode) => {
  const suite = useTestApp(mode, { extensions: [TestToolsModule], env: { MCP_PAGE_SIZE: String(PAGE_SIZE), MCP_ALLOWED_ORIGINS: 'https://agent.example' } });
  let url: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    url = `${await suite.t.app.getUrl()}/v1/mcp`.replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
  });

  const connect = async (key: string) => {
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    clients.push(client);
    return client;
  };

  /** One raw JSON-RPC POST, as a client would send it. */
  const post = (key: string | null, message: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(key && { authorization: `Bearer ${key}` }), ...headers },
      body: JSON.stringify(message),
      signal,
    });

  /** A JSON-RPC answer's body. */
  const rpc = async (answer: Response | Promise<Response>) => (await (await answer).json()) as { result?: any; error?: { code: number; message: string } };

  const execution = async (key: string, id: string) => (await suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key })).json();

  /** The newest execution of a tool for the account of `key`. */
  const newest = async (key: string, toolId: string) =>
    (await suite.t.request({ method: 'GET', url: `/v1/executions?tool_id=${toolId}&limit=1`, key })).json().executions[0] as { id: string; status: string } | undefined;

  it('initializes at the newest protocol version and negotiates the older ones', async () => {
    const client = await connect(suite.acme.key);
    expect(client.getServerVersion()).toMatchObject({ name: 'tool-orchestration-service' });
    expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: false } });

    const initialize = (protocolVersion: string) =>
      post(suite.acme.key, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
    for (const version of ['2025-06-18', '2025-03-26', '2024-11-05']) {
      const answer = await initialize(version);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
      expect((await rpc(answer)).result.protocolVersion).toBe(version);
    }
    expect((await rpc(initialize('1999-01-01'))).result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
  });

  it('lists every registered tool, extension tools included, page by page in id order, with the REST schemas and annotations', async () => {
    const client = await connect(suite.acme.key);
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    const seen = new Map<string, Awaited<ReturnType<Client['listTools']>>['tools'][number]>();
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      expect(page.tools.length).toBeLessThanOrEqual(PAGE_SIZE);
      for (const tool of page.tools) seen.set(tool.name, tool);
      names.push(...page.tools.map((tool) => tool.name));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);

    const registry = suite.t.app.get(ToolRegistry);
    // With the catalogue, execution.status (docs/mcp.md#execution-status), as the key may read executions.
    const ids = [...registry.all().map((tool) => tool.definition.id), 'execution.status'].sort();
    expect(names).toEqual(ids);
    expect(names).toEqual(expect.arrayContaining(['json-transform', 'test-sleep', 'test-record']));
    expect(pages).toBe(Math.ceil(ids.length / PAGE_SIZE));

    const transform = seen.get('json-transform')!;
    expect(transform.inputSchema).toEqual(registry.get('json-transform').inputSchema);
    expect(transform.outputSchema).toEqual(registry.get('json-transform').outputSchema);
    expect(transform).toMatchObject({ title: 'JSON Transform', annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } });
    expect(seen.get('test-record')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });

    await expect(client.listTools({ cursor: 'not a cursor' })).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
  });

  it("filters the list by the key's tool restriction and refuses the other tools", async () => {
    const narrow = await suite.t.createKey(suite.acme.id, { name: 'narrow', type: 'service', tool_ids: ['json-transform', 'test-sleep'] });
    const client = await connect(narrow);
    const first = await client.listTools();
    const second = await client.listTools({ cursor: first.nextCursor });
    expect([...first.tools, ...second.tools].map((tool) => tool.name)).toEqual(['execution.status', 'json-transform', 'test-sleep']);
    await expect(client.callTool({ name: 'test-record', arguments: {} })).rejects.toThrow(/may not use tool 'test-record'/);
  });

  it('calls a tool through the runner: structured content, the JSON as text, an execution REST can read, then the cache', async () => {
    const client = await connect(suite.acme.key);
    const args = { data: { items: [{ price: 2 }, { price: 5 }] }, expression: '$sum(items.price)' };
    const first = await client.callTool({ name: 'json-transform', arguments: args });
    expect(first.isError).toBeFalsy();
    expect(first.structuredContent).toEqual({ result: 7 });
    expect(JSON.parse((first.content as { type: string; text: string }[])[0].text)).toEqual(first.structuredContent);
    const meta = first._meta as { execution_id: string; status: string; cache: { hit: boolean } };
    expect(meta).toMatchObject({ status: 'success', cache: { hit: false } });
    expect(await execution(suite.acme.key, meta.execution_id)).toMatchObject({ status: 'success', tool_id: 'json-transform', result: { result: 7 } });

    const again = await client.callTool({ name: 'json-transform', arguments: args });
    expect(again._meta).toMatchObject({ execution_id: meta.execution_id, cache: { hit: true } });
    expect(again.structuredContent).toEqual({ result: 7 });

    // Cache-Control: no-cache bypasses the cache, as on REST.
    const fresh = await post(suite.acme.key, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'json-transform', arguments: args } }, { 'cache-control': 'no-cache' });
    const body = await rpc(fresh);
    expect(body.result._meta.cache.hit).toBe(false);
    expect(body.result._meta.execution_id).not.toBe(meta.execution_id);
  });

  it('answers invalid arguments with an error result naming the parameter, and an unknown tool with a JSON-RPC error', async () => {
    const client = await connect(suite.acme.key);
    const wrong = await client.callTool({ name: 'json-transform', arguments: { data: {}, expression: 42 } });
    expect(wrong.isError).toBe(true);
    const text = (wrong.content as { text: string }[])[0].text;
    expect(text).toContain("parameter 'expression'");
    expect(JSON.parse(text).error).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'expression' } });

    const missing = await client.callTool({ name: 'json-transform', arguments: { data: {} } });
    expect(JSON.parse((missing.content as { text: string }[])[0].text).error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'expression' } });

    const unknown = await client.callTool({ name: 'no-such-tool', arguments: {} }).catch((err: unknown) => err);
    expect(unknown).toBeInstanceOf(McpError);
    expect(unknown).toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringContaining('Unknown tool: no-such-tool') });
  });

  it('reports a failing tool as an error result carrying its execution', async () => {
    const client = await connect(suite.acme.key);
    const failed = await client.callTool({ name: 'test-misbehave', arguments: { mode: 'tool-error' } });
    expect(failed.isError).toBe(true);
    const body = JSON.parse((failed.content as { text: string }[])[0].text);
    expect(body).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', message: 'Upstream answered 503', retryable: true } });
    expect(await execution(suite.acme.key, body.execution_id)).toMatchObject({ status: 'error' });
  });

  it('answers a plain tools/call without the Server round exactly as the Server does, alone or in a batch', async () => {
    // The Server's handler looks its POST up on the transport; the plain path never does.
    const transport = (suite.t.app.get(McpEndpoint) as unknown as { transport: { call: (...args: unknown[]) => unknown } }).transport;
    const viaServer = jest.spyOn(transport, 'call');
    const args = { data: { n: [4, 5] }, expression: '$sum(n)' };
    const message = (id: string, name: string, meta?: object) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...(meta && { _meta: meta }) } });
    const plain = async (name: string) => (await post(suite.acme.key, message('c', name), { 'cache-control': 'no-cache' })).json();
    // A progress token sends the call through the Server, which answers on an SSE stream.
    const viaSdk = async (name: string) => {
      const stream = await (await post(suite.acme.key, message('c', name, { progressToken: 1 }), { 'cache-control': 'no-cache' })).text();
      return stream.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6))).find((event) => event.id === 'c');
    };
    const comparable = (body: any) => {
      if (!body.result) return body;
      const { execution_id, timing, ...about } = body.result._meta;
      return { ...body, result: { ...body.result, _meta: { ...about, execution_id: typeof execution_id, timing: Object.keys(timing) } } };
    };
    const fast = await plain('json-transform');
    expect(viaServer).not.toHaveBeenCalled();
    expect(fast).toMatchObject({ jsonrpc: '2.0', id: 'c', result: { structuredContent: { result: 9 }, content: [{ type: 'text' }] } });
    expect(comparable(fast)).toEqual(comparable(await viaSdk('json-transform')));
    expect(viaServer).toHaveBeenCalledTimes(1);
    // An unknown tool: the same JSON-RPC error.
    const unknown = await plain('no-such-tool');
    expect(unknown).toMatchObject({ id: 'c', error: { code: ErrorCode.InvalidParams } });
    expect(unknown).toEqual(await viaSdk('no-such-tool'));
    // Params the request schema refuses are left to the Server, which answers with its own error (whatever its code).
    expect(await rpc(post(suite.acme.key, { jsonrpc: '2.0', id: 'bad', method: 'tools/call', params: { name: 7 } }))).toMatchObject({ id: 'bad', error: { code: expect.any(Number) } });
    // A batch mixing both paths gets every answer.
    viaServer.mockClear();
    const batch = (await (await post(suite.acme.key, [message('a', 'json-transform'), { jsonrpc: '2.0', id: 'list', method: 'tools/list' }])).json()) as { id: string; result: any }[];
    expect(viaServer).toHaveBeenCalledTimes(1);
    expect(batch.map((answer) => answer.id).sort()).toEqual(['a', 'list']);
    expect(batch.find((answer) => answer.id === 'a')?.result.structuredContent).toEqual({ result: 9 });
    viaServer.mockRestore();
  });

  it('keeps apart concurrent clients that use the same request id, and answers a batch with an array', async () => {
    const call = (ms: number) => rpc(post(suite.acme.key, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'test-sleep', arguments: { ms } } }));
    const [slow, fast] = await Promise.all([call(400), call(100)]);
    expect(slow).toMatchObject({ id: 1, result: { structuredContent: { slept_ms: 400 } } });
    expect(fast).toMatchObject({ id: 1, result: { structuredContent: { slept_ms: 100 } } });

    const batch = await post(suite.acme.key, [
      { jsonrpc: '2.0', id: 'list', method: 'tools/list' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 'ping', method: 'ping' },
    ]);
    const answers = (await batch.json()) as { id: string; result: any }[];
    expect(answers.map((answer) => answer.id).sort()).toEqual(['list', 'ping']);
    expect(answers.find((answer) => answer.id === 'list')?.result.tools).toHaveLength(PAGE_SIZE);
    expect(answers.find((answer) => answer.id === 'ping')?.result).toEqual({});

    const notification = await post(suite.acme.key, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(notification.status).toBe(202);
    expect(await notification.text()).toBe('');
    expect((await post(suite.acme.key, [])).status).toBe(400);
  });

  it('streams notifications/progress for a progressToken, then the result', async () => {
    const client = await connect(suite.acme.key);
    const updates: { progress: number; total?: number; message?: string }[] = [];
    const result = await client.callTool({ name: 'test-sleep', arguments: { ms: 1200 } }, undefined, { onprogress: (update) => updates.push(update) });
    expect(result.structuredContent).toEqual({ slept_ms: 1200 });
    expect(updates.length).toBeGreaterThanOrEqual(2);
    expect(updates.every((update) => update.total === 100 && /^step \d+$/.test(update.message ?? ''))).toBe(true);
    const progress = updates.map((update) => update.progress);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
  });

  it('cancels the execution on notifications/cancelled', async () => {
    const key = await suite.t.createKey(suite.acme.id, { name: 'canceller', type: 'service' });
    const client = await connect(key);
    const abort = new AbortController();
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const call = client.callTool({ name: 'test-sleep', arguments: { ms: 20_000 } }, undefined, { signal: abort.signal, onprogress: () => started() });
    await running;
    abort.abort('user pressed stop');
    await expect(call).rejects.toThrow();
    const cancelled = await until('the execution to be cancelled', async () => {
      const latest = await newest(key, 'test-sleep');
      return latest?.status === 'cancelled' ? latest : undefined;
    }, 5_000);
    expect(cancelled.status).toBe('cancelled');
  });

  it('cancels the execution when the client closes the stream', async () => {
    const key = await suite.t.createKey(suite.acme.id, { name: 'closer', type: 'service' });
    const abort = new AbortController();
    const answer = await post(key, { jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'test-sleep', arguments: { ms: 20_000 }, _meta: { progressToken: 1 } } }, {}, abort.signal);
    expect(answer.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = answer.body!.getReader();
    await reader.read(); // the first progress event: the execution runs
    expect((await newest(key, 'test-sleep'))?.status).toBe('running');
    abort.abort();
    await until('the execution to be cancelled', async () => ((await newest(key, 'test-sleep'))?.status === 'cancelled' ? true : undefined), 5_000);
  });

  it("counts calls against the tool's rate limit and answers the one over it with its retry time", async () => {
    const free = await suite.t.createAccount('mcp-free', 'free');
    const client = await connect(free.key);
    for (let i = 0; i < 3; i++) expect((await client.callTool({ name: 'test-limited', arguments: {} })).isError).toBeFalsy();
    const limited = await client.callTool({ name: 'test-limited', arguments: {} });
    expect(limited.isError).toBe(true);
    const { error } = JSON.parse((limited.content as { text: string }[])[0].text);
    expect(error).toMatchObject({ code: 'RATE_LIMITED', retryable: true, details: { scope: 'tool test-limited', limit: 3 } });
    expect(error.retry_after).toBeGreaterThan(0);
    expect(error.message).toContain(`retry in ${error.retry_after}s`);
  });

  it('refuses requests without a valid key with 401 and WWW-Authenticate: Bearer', async () => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    for (const key of [null, 'sk_svc_00000000000000000000000000000000']) {
      const answer = await post(key, list);
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    await expect(connect('sk_svc_00000000000000000000000000000000')).rejects.toThrow();
  });

  it('refuses tools/call to a key without the tools:invoke scope', async () => {
    const reader = await suite.t.createKey(suite.acme.id, { name: 'reader', type: 'service', scopes: ['tools:read'] });
    const client = await connect(reader);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await expect(client.callTool({ name: 'json-transform', arguments: { data: {}, expression: '1' } })).rejects.toThrow(/lacks the 'tools:invoke' scope/);
  });

  it('takes POST only, checks Origin, and keeps the transport rules', async () => {
    for (const method of ['GET', 'DELETE']) {
      const answer = await fetch(url, { method, headers: { authorization: `Bearer ${suite.acme.key}`, accept: 'text/event-stream' } });
      expect(answer.status).toBe(405);
      expect(answer.headers.get('allow')).toBe('POST');
    }
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    expect((await post(suite.acme.key, list, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await post(suite.acme.key, list, { origin: 'https://agent.example' })).status).toBe(200);
    expect((await post(suite.acme.key, list, { accept: 'application/json' })).status).toBe(406);
    expect((await post(suite.acme.key, list, { 'mcp-protocol-version': '1999-01-01' })).status).toBe(400);
    // Valid JSON that is no JSON-RPC message: Invalid Request, as JSON-RPC 2.0 and the SDK v2 classifier say.
    const invalid = await post(suite.acme.key, { not: 'json-rpc' });
    expect(invalid.status).toBe(400);
    expect((await rpc(invalid)).error?.code).toBe(ErrorCode.InvalidRequest);
  });

  it('serves a second real client: the MCP Inspector CLI lists and calls a tool', async () => {
    const inspect = async (...args: string[]) => {
      const { stdout } = await promisify(execFile)(INSPECTOR, ['--cli', url, '--transport', 'http', '--header', `Authorization: Bearer ${suite.acme.key}`, ...args]);
      return JSON.parse(stdout);
    };
    const listed = await inspect('--method', 'tools/list');
    const firstPage = suite.t.app.get(ToolRegistry).all().map((tool) => tool.definition.id).sort().slice(0, PAGE_SIZE);
    expect(listed.tools.map((tool: { name: string }) => tool.name)).toEqual(firstPage);
    const called = await inspect('--method', 'tools/call', '--tool-name', 'json-transform', '--tool-arg', 'expression=$count(xs)', '--tool-arg', 'data={"xs":[1,2,3]}');
    expect(called.structuredContent).toEqual({ result: 3 });
    expect(await execution(suite.acme.key, called._meta.execution_id)).toMatchObject({ status: 'success', result: { result: 3 } });
  });

  if (mode.name === 'distributed') {
    describe('with a second API process', () => {
      let second: ServiceProcess | undefined;
      let secondUrl: string;

      beforeAll(async () => {
        const port = await freePort();
        second = await startServiceProcess('api', { ...suite.env, PORT: String(port), HOST: '127.0.0.1' });
        secondUrl = `http://127.0.0.1:${port}/v1/mcp`;
      });

      afterAll(() => killProcess(second));

      it('a cancel sent to one process stops the call running in another', async () => {
        const key = await suite.t.createKey(suite.acme.id, { name: 'roaming', type: 'service' });
        const call = post(key, { jsonrpc: '2.0', id: 77, method: 'tools/call', params: { name: 'test-sleep', arguments: { ms: 20_000 } } });
        const running = await until('the call to run', async () => ((await newest(key, 'test-sleep'))?.status === 'running' ? true : undefined), 5_000);
        expect(running).toBe(true);
        const cancel = await fetch(secondUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key}` },
          body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 77, reason: 'stop' } }),
        });
        expect(cancel.status).toBe(202);
        const answer = await rpc(call);
        expect(answer.result).toMatchObject({ isError: true });
        expect(JSON.parse(answer.result.content[0].text)).toMatchObject({ status: 'cancelled' });
        expect((await newest(key, 'test-sleep'))?.status).toBe('cancelled');
      });
    });
  }
});
