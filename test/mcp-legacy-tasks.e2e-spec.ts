/**
 * MCP tasks as 2025-11-25 has them (task-augmented tools/call, tasks/get, tasks/result,
 * tasks/list, tasks/cancel), driven by the SDK v1 client's experimental tasks API: a task is the
 * async execution REST reads and cancels, tasks/result waits for its end, and no key sees another
 * account's execution as a task.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, ErrorCode, McpError, RELATED_TASK_META_KEY, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { useTestApp } from './support/app';
import { describeEachEngine } from './support/engines';
import { until } from './support/poll';
import { TestToolsModule } from './support/test-tools.module';
import { ConformanceFixturesModule } from './conformance/conformance-fixtures.module';

const PAGE_SIZE = 2;

describeEachEngine('MCP 2025-11-25 tasks over executions', (mode) => {
  const suite = useTestApp(mode, { extensions: [TestToolsModule, ConformanceFixturesModule], env: { MCP_PAGE_SIZE: String(PAGE_SIZE) } });
  let url: URL;
  const clients: Client[] = [];

  beforeAll(async () => {
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    url = new URL(`${(await suite.t.app.getUrl()).replace('[::1]', '127.0.0.1')}/v1/mcp`);
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
  });

  const connect = async (key: string) => {
    const client = new Client({ name: 'e2e-legacy-tasks', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    clients.push(client);
    return client;
  };

  /** Starts a task-augmented call and answers its id (the first message of the SDK's stream). */
  const startTask = async (client: Client, name: string, args: Record<string, unknown>) => {
    const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, { task: { ttl: 60_000 } });
    const first = (await stream.next()).value;
    if (first?.type === 'error') throw first.error;
    if (first?.type !== 'taskCreated') throw new Error(`expected a task, got ${JSON.stringify(first)}`);
    return { task: first.task, stream };
  };

  const execution = async (key: string, id: string) => (await suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key })).json();

  /** Polls tasks/get until the task leaves `working`. */
  const ended = (client: Client, taskId: string) =>
    until(`task ${taskId} ended`, async () => {
      const task = await client.experimental.tasks.getTask(taskId);
      return task.status === 'working' ? undefined : task;
    }, 20_000, 100);

  const rejection = (promise: Promise<unknown>): Promise<unknown> =>
    promise.then(
      () => {
        throw new Error('expected a rejection');
      },
      (err: unknown) => err,
    );
  const mcpError = async (promise: Promise<unknown>) => {
    const error = await rejection(promise);
    expect(error).toBeInstanceOf(McpError);
    return error as McpError;
  };

  it('declares tasks (list, cancel, task-augmented tools/call) and each tool’s task support', async () => {
    const client = await connect(suite.acme.key);
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const tools = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools({ cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    expect(tools.find(({ name }) => name === 'test-sleep')?.execution).toEqual({ taskSupport: 'optional' });
    expect(tools.find(({ name }) => name === 'failing_job')?.execution).toEqual({ taskSupport: 'required' });
    expect(tools.find(({ name }) => name === 'greet')?.execution).toBeUndefined();
  });

  it('runs a task-augmented call as the async execution REST reads, working then completed, and tasks/result inlines its result', async () => {
    const client = await connect(suite.acme.key);
    const { task, stream } = await startTask(client, 'test-sleep', { ms: 1500 });
    expect(task).toMatchObject({ taskId: expect.stringMatching(/^exec_/), status: 'working', ttl: 365 * 86_400_000, pollInterval: expect.any(Number) });
    expect(Date.parse(task.createdAt)).not.toBeNaN();
    expect(await execution(suite.acme.key, task.taskId)).toMatchObject({ id: task.taskId, tool_id: 'test-sleep', mode: 'async', status: expect.stringMatching(/queued|running/) });

    // The SDK polls tasks/get until the task ends, then asks tasks/result.
    const messages = [];
    for await (const message of stream) messages.push(message);
    const statuses = messages.filter((m) => m.type === 'taskStatus').map((m) => (m as { task: { status: string } }).task.status);
    expect(statuses[0]).toBe('working');
    expect(statuses.at(-1)).toBe('completed');
    expect(messages.at(-1)).toMatchObject({ type: 'result', result: { structuredContent: { slept_ms: 1500 } } });

    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result).toMatchObject({ structuredContent: { slept_ms: 1500 }, _meta: { [RELATED_TASK_META_KEY]: { taskId: task.taskId }, execution_id: task.taskId } });
    expect(result.isError).toBeFalsy();
    expect(await execution(suite.acme.key, task.taskId)).toMatchObject({ status: 'success', result: { slept_ms: 1500 } });
  });

  it('holds tasks/result until the task ends, and a client giving up on it leaves the task running', async () => {
    const client = await connect(suite.acme.key);
    const { task } = await startTask(client, 'test-sleep', { ms: 1200 });
    const started = Date.now();
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    // Woken by the end's event, not by the wait's periodic re-read (every 5 s).
    expect(Date.now() - started).toBeGreaterThan(700);
    expect(Date.now() - started).toBeLessThan(4000);
    expect(result.structuredContent).toEqual({ slept_ms: 1200 });

    const other = await startTask(client, 'test-sleep', { ms: 1500 });
    await rejection(client.experimental.tasks.getTaskResult(other.task.taskId, CallToolResultSchema, { signal: AbortSignal.timeout(200) }));
    expect(await ended(client, other.task.taskId)).toMatchObject({ status: 'completed' });
  });

  it("answers a tool's error result as a failed task whose result has isError, and a crash as a failed task whose result is the JSON-RPC error", async () => {
    const client = await connect(suite.acme.key);
    const reported = await startTask(client, 'failing_job', {});
    expect(await ended(client, reported.task.taskId)).toMatchObject({ status: 'failed', statusMessage: 'The job failed, as it always does' });
    const errorResult = (await client.experimental.tasks.getTaskResult(reported.task.taskId, CallToolResultSchema)) as CallToolResult;
    expect(errorResult).toMatchObject({ isError: true, _meta: { [RELATED_TASK_META_KEY]: { taskId: reported.task.taskId } } });
    expect(JSON.parse((errorResult.content[0] as { text: string }).text)).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', message: 'The job failed, as it always does' } });

    const crash = await startTask(client, 'protocol_error_job', {});
    expect(await ended(client, crash.task.taskId)).toMatchObject({ status: 'failed' });
    expect(await mcpError(client.experimental.tasks.getTaskResult(crash.task.taskId, CallToolResultSchema))).toMatchObject({
      code: ErrorCode.InternalError,
      message: expect.stringContaining("Tool 'conformance-protocol-error-job' failed unexpectedly"),
    });
  });

  it('refuses a required-task tool called without `task`, and `task` on a tool without task support, with -32601', async () => {
    const client = await connect(suite.acme.key);
    const plain = await mcpError(client.request({ method: 'tools/call', params: { name: 'failing_job', arguments: {} } }, CallToolResultSchema));
    expect(plain).toMatchObject({ code: ErrorCode.MethodNotFound, message: expect.stringMatching(/runs only as a task/) });
    const augmented = await mcpError(client.request({ method: 'tools/call', params: { name: 'greet', arguments: {}, task: {} } }, CreateTaskResultSchema));
    expect(augmented).toMatchObject({ code: ErrorCode.MethodNotFound, message: expect.stringMatching(/does not support task-augmented calls/) });
    // Without `task`, an optional tool answers at once, as always.
    expect(await client.callTool({ name: 'test-sleep', arguments: { ms: 10 } })).toMatchObject({ structuredContent: { slept_ms: 10 } });
    // Invalid arguments refuse the call before a task exists: a JSON-RPC error, not a task.
    expect(await mcpError(startTask(client, 'test-sleep', { ms: -1 }))).toMatchObject({ code: ErrorCode.InvalidParams, data: { error: { code: 'INVALID_INPUT' } } });
  });

  it('cancels a task over tasks/cancel (the execution is cancelled), sees a REST cancel, and refuses to cancel a task that ended', async () => {
    const client = await connect(suite.acme.key);
    const viaMcp = await startTask(client, 'test-sleep', { ms: 20_000 });
    expect(await client.experimental.tasks.cancelTask(viaMcp.task.taskId)).toMatchObject({ taskId: viaMcp.task.taskId, status: 'cancelled' });
    expect(await execution(suite.acme.key, viaMcp.task.taskId)).toMatchObject({ status: 'cancelled' });
    expect(await mcpError(client.experimental.tasks.cancelTask(viaMcp.task.taskId))).toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringMatching(/already ended \(status 'cancelled'\)/) });

    const viaRest = await startTask(client, 'test-sleep', { ms: 20_000 });
    expect((await suite.t.request({ method: 'DELETE', url: `/v1/executions/${viaRest.task.taskId}`, key: suite.acme.key })).statusCode).toBe(200);
    expect(await client.experimental.tasks.getTask(viaRest.task.taskId)).toMatchObject({ status: 'cancelled' });
    expect(await client.experimental.tasks.getTaskResult(viaRest.task.taskId, CallToolResultSchema)).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('"status":"cancelled"') }] });

    const done = await startTask(client, 'test-sleep', { ms: 0 });
    await ended(client, done.task.taskId);
    expect(await mcpError(client.experimental.tasks.cancelTask(done.task.taskId))).toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringMatching(/status 'completed'/) });
  });

  it('lists the async executions the key may see as tasks, newest first, page by page, and no sync call among them', async () => {
    const owner = await suite.t.createAccount('lister');
    const client = await connect(owner.key);
    const started: string[] = [];
    for (let i = 0; i < 2; i++) started.push((await startTask(client, 'test-sleep', { ms: 0 })).task.taskId);
    const rest = await suite.t.request({ method: 'POST', url: '/v1/tools/test-sleep/invoke?async=true', key: owner.key, payload: { ms: 0 } });
    started.push(rest.json().execution_id as string);
    const sync = await client.callTool({ name: 'test-sleep', arguments: { ms: 0 } });
    const syncId = (sync._meta as { execution_id: string }).execution_id;

    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await client.experimental.tasks.listTasks(cursor);
      pages.push(page.tasks.map(({ taskId }) => taskId));
      expect(page.tasks.every(({ createdAt, ttl }) => !Number.isNaN(Date.parse(createdAt)) && ttl === 365 * 86_400_000)).toBe(true);
      cursor = page.nextCursor;
    } while (cursor);
    expect(pages.map((page) => page.length)).toEqual([PAGE_SIZE, 1]);
    expect(pages.flat()).toEqual([...started].reverse());
    expect(pages.flat()).not.toContain(syncId);
    // What tasks/list leaves out, tasks/get does not find either.
    expect(await mcpError(client.experimental.tasks.getTask(syncId))).toMatchObject({ code: ErrorCode.InvalidParams });
    expect(await mcpError(client.experimental.tasks.listTasks('not-a-cursor'))).toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringMatching(/Invalid cursor/) });
  });

  it("never shows, waits on or cancels another account's execution as a task, whether it began over MCP or REST", async () => {
    const owner = await connect(suite.acme.key);
    const mcpTask = (await startTask(owner, 'test-sleep', { ms: 3000 })).task.taskId;
    const restTask = (await suite.t.request({ method: 'POST', url: '/v1/tools/test-sleep/invoke?async=true', key: suite.acme.key, payload: { ms: 3000 } })).json().execution_id as string;

    const stranger = await suite.t.createAccount('stranger');
    const other = await connect(stranger.key);
    for (const taskId of [mcpTask, restTask]) {
      for (const ask of [
        () => other.experimental.tasks.getTask(taskId),
        () => other.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
        () => other.experimental.tasks.cancelTask(taskId),
      ]) {
        expect(await mcpError(ask())).toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringMatching(/Failed to retrieve task: Task not found$/) });
      }
    }
    expect((await other.experimental.tasks.listTasks()).tasks).toEqual([]);
    // Still the owner's, untouched.
    expect(await owner.experimental.tasks.getTask(restTask)).toMatchObject({ status: 'working' });
    expect((await execution(suite.acme.key, mcpTask)).status).toMatch(/queued|running/);
  });

  it('tells a tool started as a 2025-11-25 task that it cannot ask its caller, and the task fails saying so', async () => {
    const client = await connect(suite.acme.key);
    const { task } = await startTask(client, 'confirm_delete', {});
    expect(await ended(client, task.taskId)).toMatchObject({ status: 'failed' });
    const result = (await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)) as CallToolResult;
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(/asks its caller for input, which this call cannot carry/);
  });
});
