/**
 * Upstream tasks of the 2026-07-28 Tasks extension (io.modelcontextprotocol/tasks, SEP-2663)
 * mapped onto ours (docs/upstreams.md#upstream-tasks), on both engines, against a second instance
 * of this service (it serves the extension, docs/mcp.md) registered as an upstream of the
 * first: an async call of its test-sleep (REST async or an MCP task of ours) becomes a task
 * there, an execution of the second instance, followed with tasks/get to its result; our cancel
 * reaches it (tasks/cancel) and its execution ends cancelled; a sync call stays an ordinary
 * tools/call; its questions reach our caller and the answers go back (tasks/update, or the call
 * sent again before a task starts); its failures, and the upstream lost mid-task, end ours truthfully.
 */
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Execution } from '../src/executions/engine/execution.entity';
import { Upstream } from '../src/upstreams/upstream.entity';
import { startTestApp, useTestApp, type TestApp } from './support/app';
import { DATABASE_MODES } from './support/databases';
import { describeEachEngine } from './support/engines';
import { until } from './support/poll';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';
import { TestToolsModule } from './support/test-tools.module';
import { ConformanceFixturesModule } from './conformance/conformance-fixtures.module';

const ENV = { SECRETS_KEY: randomBytes(32).toString('base64'), EGRESS_ALLOW: '127.0.0.1' };

describeEachEngine('2026-07-28 upstream tasks mapped onto executions', (mode) => {
  const suite = useTestApp(mode, { env: ENV });
  /** The second instance: the upstream, on its own embedded database. */
  let peer: TestApp;
  let peerKey: string;
  let cleanupPeer: (() => Promise<void>) | undefined;
  let key: string;
  /** A second registration of the peer, reached through a proxy a test takes down mid-task. */
  let proxy: TcpProxy;

  beforeAll(async () => {
    const prepared = await DATABASE_MODES.find((m) => m.name === 'pglite')!.prepare();
    cleanupPeer = prepared.cleanup;
    peer = await startTestApp({ env: { ...prepared.env, SECRETS_KEY: randomBytes(32).toString('base64') }, extensions: [TestToolsModule, ConformanceFixturesModule] });
    peerKey = (await peer.createAccount('peer-owner')).key;
    await peer.app.listen({ port: 0, host: '127.0.0.1' });
    const peerUrl = `${(await peer.app.getUrl()).replace('[::1]', '127.0.0.1')}/v1/mcp`;

    key = (await suite.t.createAccount('up-tasks-2026')).key;
    expect((await suite.t.request({ method: 'PUT', url: '/v1/secrets/PEER_KEY', key, payload: { value: peerKey } })).statusCode).toBeLessThan(300);
    const registered = await suite.t.request({ method: 'POST', url: '/v1/upstreams', key, payload: { name: 'peer', transport: 'streamable-http', url: peerUrl, auth: { bearer_secret_name: 'PEER_KEY' } } });
    expect(registered.statusCode).toBe(201);
    expect(registered.json().tools).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'test-sleep' })]));
    // Its tools/list says test-sleep may run as a task, which the Tasks extension it declares lets us follow.
    const row = await suite.t.app.get(DataSource).getRepository(Upstream).findOneByOrFail({ id: registered.json().id });
    expect(row.tools.find((tool) => tool.name === 'test-sleep')).toMatchObject({ task_support: 'optional' });

    proxy = await startTcpProxy('127.0.0.1', Number(new URL(peerUrl).port));
    const proxied = `http://127.0.0.1:${proxy.port}/v1/mcp`;
    expect((await suite.t.request({ method: 'POST', url: '/v1/upstreams', key, payload: { name: 'fragile', transport: 'streamable-http', url: proxied, auth: { bearer_secret_name: 'PEER_KEY' } } })).statusCode).toBe(201);
  });
  afterAll(async () => {
    await proxy?.close();
    await peer?.close();
    await cleanupPeer?.();
  });

  const invoke = (inputs: object, query = '', tool = 'peer.test-sleep') => suite.t.request({ method: 'POST', url: `/v1/tools/${tool}/invoke${query}`, key, payload: { inputs } });
  const execution = async (id: string) => (await suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key })).json();
  const peerExecution = async (id: string) => (await peer.request({ method: 'GET', url: `/v1/executions/${id}`, key: peerKey })).json();
  const active = (row: { status: string }) => ['queued', 'running'].includes(row.status);
  const ended = (read: (id: string) => Promise<any>, id: string, ms = 20_000) =>
    until(`execution ${id} ends`, async () => {
      const row = await read(id);
      return active(row) ? undefined : row;
    }, ms);
  /** The upstream task our execution `id` runs as, as its row keeps it. */
  const keptTask = async (id: string) => (await suite.t.app.get(DataSource).getRepository(Execution).findOneBy({ id }))?.upstream_task ?? null;

  it('runs an async call as a task of the upstream: an execution there, its status messages our progress, its result ours', async () => {
    const id = (await invoke({ ms: 2_000 }, '?async=true')).json().execution_id as string;
    const kept = await until('the upstream task is kept with the execution', () => keptTask(id).then((task) => task ?? undefined), 10_000, 100);
    expect(kept).toMatchObject({ task_id: expect.stringMatching(/^exec_/), upstream_id: expect.any(String) });
    // The upstream task is an async execution of the second instance, of its test-sleep.
    expect(await peerExecution(kept.task_id)).toMatchObject({ id: kept.task_id, tool_id: 'test-sleep', mode: 'async' });
    const midway = await until('a status message of the upstream task', async () => {
      const row = await execution(id);
      return row.status === 'running' && /^step \d+$/.test(row.progress_message ?? '') ? row : undefined;
    }, 10_000, 100);
    expect(midway.progress_message).toMatch(/^step \d+$/);
    expect(await ended(execution, id)).toMatchObject({ status: 'success', result: { slept_ms: 2_000 }, upstream_task: kept });
    expect(await peerExecution(kept.task_id)).toMatchObject({ status: 'success', result: { slept_ms: 2_000 } });
  });

  it('runs an MCP task of ours (a 2026-07-28 client taking tasks) as a task of the upstream', async () => {
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    const ours = `${(await suite.t.app.getUrl()).replace('[::1]', '127.0.0.1')}/v1/mcp`;
    const name = 'peer.test-sleep';
    const answer = await fetch(ours, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name,
          arguments: { ms: 500 },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'e2e-upstream-tasks-2026', version: '1.0.0' },
            'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
          },
        },
      }),
    });
    const { result } = (await answer.json()) as { result: { resultType: string; taskId: string } };
    expect(result).toMatchObject({ resultType: 'task', taskId: expect.stringMatching(/^exec_/) });
    expect(await ended(execution, result.taskId)).toMatchObject({ status: 'success', result: { slept_ms: 500 } });
    const kept = (await keptTask(result.taskId))!;
    expect(await peerExecution(kept.task_id)).toMatchObject({ tool_id: 'test-sleep', status: 'success' });
  });

  it('keeps a sync call an ordinary tools/call (no task upstream)', async () => {
    const answer = (await invoke({ ms: 0 })).json();
    expect(answer).toMatchObject({ status: 'success', result: { slept_ms: 0 } });
    expect(await keptTask(answer.execution_id)).toBeNull();
  });

  it('cancels the upstream task (tasks/cancel) when ours is cancelled mid-task: its execution ends cancelled', async () => {
    const id = (await invoke({ ms: 30_000 }, '?async=true')).json().execution_id as string;
    const kept = await until('the upstream task is kept with the execution', () => keptTask(id).then((task) => task ?? undefined), 10_000, 100);
    await until('the upstream task runs', async () => ((await peerExecution(kept.task_id)).status === 'running' ? true : undefined), 10_000, 100);
    expect((await suite.t.request({ method: 'DELETE', url: `/v1/executions/${id}`, key })).statusCode).toBeLessThan(300);
    expect(await ended(execution, id, 10_000)).toMatchObject({ status: 'cancelled' });
    expect(await ended(peerExecution, kept.task_id, 10_000)).toMatchObject({ status: 'cancelled' });
  });

  it('ends ours in error, not retryable, when the upstream task is cancelled there', async () => {
    const id = (await invoke({ ms: 30_000 }, '?async=true')).json().execution_id as string;
    const kept = await until('the upstream task is kept with the execution', () => keptTask(id).then((task) => task ?? undefined), 10_000, 100);
    expect((await peer.request({ method: 'DELETE', url: `/v1/executions/${kept.task_id}`, key: peerKey })).statusCode).toBeLessThan(300);
    expect(await ended(execution, id, 10_000)).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', retryable: false, message: expect.stringMatching(/^The upstream cancelled its task exec_/) } });
  });

  it("passes a question the upstream task asks to our caller, and the answer back with tasks/update", async () => {
    const id = (await invoke({}, '?async=true', 'peer.confirm_delete')).json().execution_id as string;
    const waiting = await until('ours waits for its caller', async () => {
      const row = await execution(id);
      return row.status === 'input_required' ? row : undefined;
    }, 10_000, 100);
    expect(waiting.input_requests).toEqual({ 'upstream-elicitation-1': { method: 'elicitation/create', params: expect.objectContaining({ message: 'Delete the file?' }) } });
    const first = (await keptTask(id))!;
    // Ours stopped at the question: the upstream task is not left waiting.
    await until('the first upstream task is cancelled', async () => ((await peerExecution(first.task_id)).status === 'cancelled' ? true : undefined), 10_000, 100);
    const answered = await suite.t.request({ method: 'POST', url: `/v1/executions/${id}/input`, key, payload: { responses: { 'upstream-elicitation-1': { action: 'accept', content: { confirm: true } } } } });
    expect(answered.statusCode).toBeLessThan(300);
    const done = await ended(execution, id);
    expect(done).toMatchObject({ status: 'success', result: { content: [{ type: 'text', text: 'Deleted' }] } });
    // The rerun started a new upstream task, which asked again and was answered with tasks/update (it deleted: it was told 'accept').
    const second = (await keptTask(id))!;
    expect(second.task_id).not.toBe(first.task_id);
    expect(await peerExecution(second.task_id)).toMatchObject({ status: 'success', result: { content: [{ type: 'text', text: 'Deleted' }] } });
  });

  it('answers questions asked before the task starts, then follows the task', async () => {
    const id = (await invoke({}, '?async=true', 'peer.test_tool_with_task')).json().execution_id as string;
    await until('ours waits for its caller', async () => ((await execution(id)).status === 'input_required' ? true : undefined), 10_000, 100);
    expect((await suite.t.request({ method: 'POST', url: `/v1/executions/${id}/input`, key, payload: { responses: { 'upstream-elicitation-1': { action: 'accept', content: { name: 'Ada' } } } } })).statusCode).toBeLessThan(300);
    expect(await ended(execution, id)).toMatchObject({ status: 'success', result: { content: [{ type: 'text', text: 'Hello from a task, Ada!' }] } });
    expect(await keptTask(id)).toMatchObject({ task_id: expect.stringMatching(/^exec_/) });
  });

  it('ends ours in error, not retryable, with the error the upstream task ended with', async () => {
    const failing = (await invoke({}, '?async=true', 'peer.failing_job')).json().execution_id as string;
    const crashing = (await invoke({}, '?async=true', 'peer.protocol_error_job')).json().execution_id as string;
    expect(await ended(execution, failing)).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', retryable: false, message: expect.stringContaining('The job failed, as it always does') } });
    expect(await ended(execution, crashing)).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', retryable: false, message: expect.stringMatching(/^The upstream task exec_\S+ failed: /), details: { upstream_task_id: expect.any(String) } } });
  });

  it('ends ours in error, not retryable, when the upstream is lost mid-task and cannot be told to stop: the task may still run there', async () => {
    const id = (await invoke({ ms: 3_000 }, '?async=true', 'fragile.test-sleep')).json().execution_id as string;
    const kept = await until('the upstream task is kept with the execution', () => keptTask(id).then((task) => task ?? undefined), 10_000, 100);
    await proxy.down();
    try {
      expect(await ended(execution, id, 15_000)).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', retryable: false, message: expect.stringMatching(/^Lost contact with the upstream task exec_\S+, which may still be running there/), details: { upstream_task_id: kept.task_id } } });
      // It did: a retry would have started a second one.
      expect(await ended(peerExecution, kept.task_id, 10_000)).toMatchObject({ status: 'success' });
    } finally {
      await proxy.up();
    }
  });
});
