/**
 * MCP Tasks (the io.modelcontextprotocol/tasks extension of 2026-07-28) are our executions: driven
 * by the official client package (@modelcontextprotocol/ext-tasks over the SDK v2 client), a task
 * is the row REST reads, cancellable from either side, and no key sees another account's.
 */
import type * as SdkClient from '@modelcontextprotocol/client';
import * as path from 'node:path';
import type * as TasksClient from '@modelcontextprotocol/ext-tasks/client';
import type * as TasksCore from '@modelcontextprotocol/ext-tasks/core';
import { importEsm } from '@tos/sdk';
import { useTestApp } from './support/app';
import { DATABASE_MODES } from './support/databases';
import { until } from './support/poll';
import { TestToolsModule } from './support/test-tools.module';
import { ConformanceFixturesModule } from './conformance/conformance-fixtures.module';

const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const CLIENT_INFO = { name: 'e2e-tasks', version: '1.0.0' };
type RpcAnswer = { id: unknown; result?: any; error?: { code: number; message: string } };

describe('MCP tasks over executions', () => {
  const suite = useTestApp(DATABASE_MODES[0], { extensions: [TestToolsModule, ConformanceFixturesModule] });
  let url: URL;
  let tasks: typeof TasksClient;
  let sdk: typeof SdkClient;
  /** A value as a plain object of that realm (JSON through its JSON). */
  let inTheirRealm: typeof TasksCore.toJsonValue;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    // Node's loader, not Jest's: the package checks results are plain objects of its own realm, so the
    // SDK client it drives comes from the same loader (and the ES build it imports). Its package
    // exports only an `import` condition, which require.resolve does not match: load the files.
    const packages = path.join(__dirname, '../node_modules/@modelcontextprotocol');
    tasks = await importEsm<typeof TasksClient>(path.join(packages, 'ext-tasks/dist/client/index.js'));
    sdk = await importEsm<typeof SdkClient>(path.join(packages, 'client/dist/index.mjs'));
    inTheirRealm = (await importEsm<typeof TasksCore>(path.join(packages, 'ext-tasks/dist/core/index.js'))).toJsonValue;
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    url = new URL(`${(await suite.t.app.getUrl()).replace('[::1]', '127.0.0.1')}/v1/mcp`);
  });
  afterAll(async () => {
    for (const close of closers) await close();
  });

  /** One 2026-07-28 JSON-RPC request as the wire carries it: routing headers and the `_meta` envelope (tasks declared unless `declare` is false; these capabilities when an object). */
  const post = async (key: string, request: { method: string; params?: Record<string, unknown>; id?: unknown }, declare: boolean | Record<string, unknown> = true): Promise<RpcAnswer> => {
    const params = request.params ?? {};
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': MODERN,
      'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
      'io.modelcontextprotocol/clientCapabilities': typeof declare === 'object' ? declare : declare ? { extensions: { [TASKS]: {} } } : {},
    };
    const name = params.taskId ?? params.name;
    const answer = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': request.method,
        ...(typeof name === 'string' && { 'mcp-name': name }),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: request.id ?? 1, method: request.method, params: { ...params, _meta: { ...(params._meta as object), ...envelope } } }),
    });
    return (await answer.json()) as RpcAnswer;
  };

  /** The official client's task session, its V2 requests sent by `post`. */
  const session = async (key: string) => {
    const client = new sdk.Client(CLIENT_INFO, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new sdk.StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    const opened = tasks.createTaskSessionFromClient(client, {
      endpointId: 'e2e',
      rawDispatch: async (request) => inTheirRealm(await post(key, request as { method: string; params?: Record<string, unknown> })) as never,
      v2RequestFraming: { protocolVersion: MODERN, clientInfo: CLIENT_INFO, clientCapabilities: { extensions: { [TASKS]: {} } } },
    });
    closers.push(async () => {
      await opened.close();
      await client.close();
    });
    return opened;
  };

  const execution = (key: string, id: string) => suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key }).then((res) => res.json());

  it('runs a task-supporting tool as a task whose id is the execution REST reads, and inlines its result when it completes', async () => {
    const tasksSession = await session(suite.acme.key);
    const call = await tasksSession.callTool('test-sleep', inTheirRealm({ ms: 1500 }) as never);
    expect(call.kind).toBe('task');
    const taskId = call.handle!.taskId;
    expect(await execution(suite.acme.key, taskId)).toMatchObject({ id: taskId, tool_id: 'test-sleep', mode: 'async', status: expect.stringMatching(/queued|running/) });

    const { outcome } = await call.settle();
    expect(outcome).toMatchObject({ status: 'completed', result: { structuredContent: { slept_ms: 1500 } } });
    expect(await execution(suite.acme.key, taskId)).toMatchObject({ status: 'success', result: { slept_ms: 1500 } });
  });

  it("asks a tool's up-front questions before its task exists (SEP-2663), then starts the task with the answers", async () => {
    const key = suite.acme.key;
    const capable = { elicitation: {}, extensions: { [TASKS]: {} } };
    const call = (extra: Record<string, unknown> = {}, capabilities: Record<string, unknown> = capable) =>
      post(key, { method: 'tools/call', params: { name: 'test_tool_with_task', arguments: {}, ...extra } }, capabilities);
    const runs = async () => (await suite.t.request({ method: 'GET', url: '/v1/executions?tool_id=conformance-test-tool-with-task&limit=1', key })).json().total;

    const first = await call();
    expect(first.result).toMatchObject({ resultType: 'input_required', inputRequests: { user_name: { method: 'elicitation/create' } }, requestState: expect.any(String) });
    expect(first.result).not.toHaveProperty('taskId');
    const answered = (state: string) => call({ inputResponses: { user_name: { action: 'accept', content: { name: 'Ada' } } }, requestState: state });
    expect((await answered(`${first.result.requestState}x`)).error).toMatchObject({ code: -32602 });
    // A client that cannot answer the question is told what it lacks.
    expect((await call({}, { extensions: { [TASKS]: {} } })).error).toMatchObject({ code: -32021 });
    expect(await runs()).toBe(0);

    const created = (await answered(first.result.requestState)).result;
    expect(created).toMatchObject({ resultType: 'task', taskId: expect.any(String), status: 'working' });
    expect(created).not.toHaveProperty('requestState');
    const done = await until('the task completes', async () => {
      const task = (await post(key, { method: 'tasks/get', params: { taskId: created.taskId } }, capable)).result;
      return task?.status === 'completed' ? task : undefined;
    });
    expect(done.result.content).toEqual([{ type: 'text', text: 'Hello from a task, Ada!' }]);
    expect(await execution(key, created.taskId)).toMatchObject({ mode: 'async', status: 'success' });
    expect(await runs()).toBe(1);
  });

  it('cancels a task with tasks/cancel (the execution is cancelled) and sees a REST cancel as the task cancelled', async () => {
    const tasksSession = await session(suite.acme.key);
    const viaMcp = await tasksSession.callTool('test-sleep', inTheirRealm({ ms: 20_000 }) as never);
    await viaMcp.cancel();
    await until('the execution cancelled', async () => ((await execution(suite.acme.key, viaMcp.handle!.taskId)).status === 'cancelled' ? true : undefined));

    const viaRest = await tasksSession.callTool('test-sleep', inTheirRealm({ ms: 20_000 }) as never);
    const deleted = await suite.t.request({ method: 'DELETE', url: `/v1/executions/${viaRest.handle!.taskId}`, key: suite.acme.key });
    expect(deleted.statusCode).toBe(200);
    expect((await viaRest.settle()).outcome.status).toBe('cancelled');
    // Cancelling a task that ended is acknowledged again, as the extension asks.
    expect(await post(suite.acme.key, { method: 'tasks/cancel', params: { taskId: viaRest.handle!.taskId } })).toMatchObject({ result: { resultType: 'complete' } });
  });

  it("never shows or cancels another account's execution as a task, and answers a client without the extension at once", async () => {
    const other = await suite.t.createAccount('other-tasks');
    const queued = await suite.t.request({ method: 'POST', url: '/v1/tools/test-sleep/invoke?async=true', key: suite.acme.key, payload: { ms: 3000 } });
    const id = queued.json().execution_id as string;

    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      const answer = await post(other.key, { method, params: { taskId: id, ...(method === 'tasks/update' && { inputResponses: {} }) } });
      expect(answer.error).toMatchObject({ code: -32602, message: expect.stringMatching(/Task not found/) });
    }
    // Without the extension on the request, the task methods are refused and the call is synchronous.
    expect((await post(suite.acme.key, { method: 'tasks/get', params: { taskId: id } }, false)).error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } });
    const sync = await post(suite.acme.key, { method: 'tools/call', params: { name: 'test-sleep', arguments: { ms: 10 } } }, false);
    expect(sync.result).toMatchObject({ resultType: 'complete', structuredContent: { slept_ms: 10 } });

    const owner = await post(suite.acme.key, { method: 'tasks/get', params: { taskId: id } });
    expect(owner.result).toMatchObject({ resultType: 'complete', taskId: id, status: 'working', pollIntervalMs: expect.any(Number), ttlMs: 365 * 86_400_000 });
    await until('the execution done', async () => ((await execution(suite.acme.key, id)).status === 'success' ? true : undefined));
  });

  it('runs a tool that only runs in the background as an async execution, and refuses a synchronous call of it on either door', async () => {
    const sync = await suite.t.request({ method: 'POST', url: '/v1/tools/conformance-failing-job/invoke', key: suite.acme.key, payload: {} });
    expect(sync.statusCode).toBe(400);
    expect(sync.json().error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'async' }, suggestion: expect.stringMatching(/async=true/) });
    const queued = await suite.t.request({ method: 'POST', url: '/v1/tools/conformance-failing-job/invoke?async=true', key: suite.acme.key, payload: {} });
    expect(queued.statusCode).toBe(202);
    expect((await post(suite.acme.key, { method: 'tools/call', params: { name: 'failing_job', arguments: {} } }, false)).error).toMatchObject({ code: -32021 });

    // A crash is a failed task (a JSON-RPC error); an error the tool reported, a completed one with isError.
    const crash = await post(suite.acme.key, { method: 'tools/call', params: { name: 'protocol_error_job', arguments: {} } });
    const reported = await post(suite.acme.key, { method: 'tools/call', params: { name: 'failing_job', arguments: {} } });
    const ended = (taskId: string) =>
      until(`task ${taskId} ended`, async () => {
        const { result } = await post(suite.acme.key, { method: 'tasks/get', params: { taskId } });
        return result.status === 'working' ? undefined : result;
      });
    expect(await ended(crash.result.taskId)).toMatchObject({ status: 'failed', error: { code: -32603, message: "Tool 'conformance-protocol-error-job' failed unexpectedly" } });
    expect(await ended(reported.result.taskId)).toMatchObject({ status: 'completed', result: { resultType: 'complete', isError: true } });
  });
});
