/**
 * Upstream tasks mapped onto ours (docs/upstreams.md#upstream-tasks), on both engines, against a
 * server of our own made with the official SDK (v1, the 2025-11-25 `tasks` capability and the
 * SDK's own task store): an async call of a task-capable tool runs as an upstream task, through
 * REST and MCP (a 2025-11-25 task of ours), its status messages our progress messages; our cancel
 * reaches the upstream as tasks/cancel; an upstream task that fails, or an upstream that dies,
 * ends ours truthfully; a sync call stays an ordinary tools/call; a shutdown that aborts ours
 * cancels the upstream task.
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { DataSource } from 'typeorm';
import { Execution } from '../src/executions/engine/execution.entity';
import { startTestApp, useTestApp } from './support/app';
import { describeEachEngine } from './support/engines';
import { startTaskServer, TASK_POLL_INTERVAL_MS, type SdkMcpServer } from './support/sdk-mcp-servers';
import { until } from './support/poll';

const ENV = { SECRETS_KEY: randomBytes(32).toString('base64'), EGRESS_ALLOW: '127.0.0.1' };

describeEachEngine('upstream tasks mapped onto executions', (mode) => {
  const suite = useTestApp(mode, { env: ENV });
  let server: SdkMcpServer;
  let key: string;
  let mcpUrl: URL;
  const clients: Client[] = [];

  beforeAll(async () => {
    server = await startTaskServer();
    const account = await suite.t.createAccount('up-tasks');
    key = account.key;
    const registered = await suite.t.request({ method: 'POST', url: '/v1/upstreams', key, payload: { name: 'tasker', transport: 'streamable-http', url: server.url, auth: { none: true } } });
    expect(registered.statusCode).toBe(201);
    expect(registered.json().tools).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'count' }), expect.objectContaining({ name: 'explode' })]));
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    mcpUrl = new URL(`${(await suite.t.app.getUrl()).replace('[::1]', '127.0.0.1')}/v1/mcp`);
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await server.close();
  });

  const invoke = (toolId: string, inputs: object, query = '') => suite.t.request({ method: 'POST', url: `/v1/tools/${toolId}/invoke${query}`, key, payload: { inputs } });
  const execution = async (id: string) => (await suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key })).json();
  const ended = (id: string, ms = 20_000) =>
    until(`execution ${id} ends`, async () => {
      const row = await execution(id);
      return ['queued', 'running'].includes(row.status) ? undefined : row;
    }, ms);
  /** How many times the upstream was sent `method` so far. */
  const sent = (method: string) => server.methods.filter((seen) => seen === method).length;
  /** The upstream task our execution `id` runs as, as the execution row keeps it. */
  const keptTask = async (id: string) => {
    const row = await suite.t.app.get(DataSource).getRepository(Execution).findOneBy({ id });
    return row?.upstream_task ?? null;
  };

  it('runs an async REST call as an upstream task: its status messages as progress, its result read at the end', async () => {
    const before = { calls: sent('tools/call'), polls: sent('tasks/get'), results: sent('tasks/result') };
    const id = (await invoke('tasker.count', { steps: 4 }, '?async=true')).json().execution_id as string;
    const midway = await until('a status message of the upstream task', async () => {
      const row = await execution(id);
      return row.status === 'running' && /^step \d of 4$/.test(row.progress_message ?? '') ? row : undefined;
    }, 10_000, 100);
    expect(midway.progress_message).toMatch(/^step [1-3] of 4$/);
    expect(await ended(id)).toMatchObject({ status: 'success', result: { content: [{ type: 'text', text: 'counted 4' }] } });
    expect(sent('tools/call') - before.calls).toBe(1);
    expect(sent('tasks/result') - before.results).toBe(1);
    // Polled at the upstream's interval (200 ms) over about 2 s: neither once nor in a spin.
    const polls = sent('tasks/get') - before.polls;
    expect(polls).toBeGreaterThanOrEqual(3);
    expect(polls).toBeLessThanOrEqual(2_000 / TASK_POLL_INTERVAL_MS + 5);
    const kept = await keptTask(id);
    expect(kept).toMatchObject({ task_id: expect.any(String), upstream_id: expect.any(String) });
    expect((await execution(id)).upstream_task).toEqual(kept);
  });

  it('keeps a sync call of a tool the upstream may run as a task an ordinary tools/call', async () => {
    const polls = sent('tasks/get');
    expect((await invoke('tasker.count', { steps: 1 })).json()).toMatchObject({ status: 'success', result: { content: [{ type: 'text', text: 'counted 1' }] } });
    expect(sent('tasks/get')).toBe(polls);
  });

  it('cancels the upstream task (tasks/cancel) when our execution is cancelled mid-task', async () => {
    const cancelledBefore = server.cancelled;
    const id = (await invoke('tasker.count', { steps: 40 }, '?async=true')).json().execution_id as string;
    await until('the upstream task reports a step', async () => (/^step/.test((await execution(id)).progress_message ?? '') ? true : undefined), 10_000, 100);
    expect((await suite.t.request({ method: 'DELETE', url: `/v1/executions/${id}`, key })).statusCode).toBeLessThan(300);
    expect(await ended(id, 10_000)).toMatchObject({ status: 'cancelled' });
    await until('the upstream saw tasks/cancel and stopped', async () => (server.methods.includes('tasks/cancel') && server.cancelled > cancelledBefore ? true : undefined), 5_000);
  });

  it('ends ours in error, not retryable, with the upstream task failing', async () => {
    const id = (await invoke('tasker.explode', {}, '?async=true')).json().execution_id as string;
    expect(await ended(id)).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', retryable: false, message: expect.stringContaining('the upstream task blew up') } });
  });

  it('ends ours in error, not retryable, when the upstream cancels its task or the task expires', async () => {
    const abandoned = (await invoke('tasker.abandon', {}, '?async=true')).json().execution_id as string;
    const expired = (await invoke('tasker.fleeting', {}, '?async=true')).json().execution_id as string;
    expect(await ended(abandoned)).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', retryable: false, message: expect.stringMatching(/^The upstream cancelled its task \S+: the upstream gave up$/) } });
    expect(await ended(expired)).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', retryable: false, message: expect.stringMatching(/^The upstream no longer has its task \S+ \(it expired or was lost\): .*not found/i), details: { upstream_task_id: expect.any(String) } } });
  });

  it('ends ours in error, not retryable, when the upstream refuses to create the task', async () => {
    const id = (await invoke('tasker.refuse', {}, '?async=true')).json().execution_id as string;
    // The SDK server answers a task it could not create with a JSON-RPC error.
    expect(await ended(id)).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', retryable: false, message: expect.stringContaining("Upstream 'tasker' refused the call"), details: { rpc_code: -32602 } } });
    expect(await keptTask(id)).toBeNull();
  });

  it('runs a task-only tool as an upstream task for a sync call too', async () => {
    const answer = (await invoke('tasker.explode', {})).json();
    expect(answer).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', message: expect.stringContaining('the upstream task blew up') } });
  });

  it('runs an MCP task of ours as an upstream task, and cancels it upstream with tasks/cancel', async () => {
    const client = new Client({ name: 'e2e-upstream-tasks', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    clients.push(client);
    const start = async (steps: number) => {
      const stream = client.experimental.tasks.callToolStream({ name: 'tasker.count', arguments: { steps } }, CallToolResultSchema, { task: { ttl: 60_000 } });
      const first = (await stream.next()).value;
      if (first?.type !== 'taskCreated') throw new Error(`expected a task, got ${JSON.stringify(first)}`);
      return first.task.taskId;
    };
    const results = sent('tasks/result');
    const done = await start(3);
    const finished = await until('our task completes', async () => {
      const task = await client.experimental.tasks.getTask(done);
      return task.status === 'working' ? undefined : task;
    }, 20_000, 100);
    expect(finished.status).toBe('completed');
    const result = await client.experimental.tasks.getTaskResult(done, CallToolResultSchema);
    expect(result.structuredContent).toEqual({ content: [{ type: 'text', text: 'counted 3' }] });
    expect(sent('tasks/result')).toBe(results + 1);
    expect(await keptTask(done)).toMatchObject({ task_id: expect.any(String) });

    const cancels = sent('tasks/cancel');
    const stopped = await start(40);
    await until('the upstream task runs', async () => ((await keptTask(stopped)) ? true : undefined), 10_000, 100);
    await client.experimental.tasks.cancelTask(stopped);
    expect(await ended(stopped, 10_000)).toMatchObject({ status: 'cancelled' });
    await until('the upstream saw tasks/cancel', async () => (sent('tasks/cancel') > cancels ? true : undefined), 5_000);
  });

  it('ends ours with a retryable error, starting no second task, when the upstream restarts mid-task and forgets the session', async () => {
    let restarting = await startTaskServer();
    const registered = await suite.t.request({ method: 'POST', url: '/v1/upstreams', key, payload: { name: 'restarting', transport: 'streamable-http', url: restarting.url, auth: { none: true } } });
    expect(registered.statusCode).toBe(201);
    try {
      const id = (await invoke('restarting.count', { steps: 40 }, '?async=true')).json().execution_id as string;
      await until('the upstream task reports a step', async () => (/^step/.test((await execution(id)).progress_message ?? '') ? true : undefined), 10_000, 100);
      await restarting.close();
      restarting = await startTaskServer(Number(new URL(restarting.url).port));
      // Whichever notices first (the next tasks/get, or the broken event stream's ping), the session is unknown there.
      expect(await ended(id, 15_000)).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', retryable: true, message: expect.stringMatching(/^Upstream 'restarting' could not be called: .*Session not found/) } });
      expect(restarting.methods).not.toContain('tools/call');
    } finally {
      await restarting.close();
    }
  });

  it('ends ours with a retryable error when the upstream dies mid-task, nothing left running', async () => {
    const doomed = await startTaskServer();
    const registered = await suite.t.request({ method: 'POST', url: '/v1/upstreams', key, payload: { name: 'doomed', transport: 'streamable-http', url: doomed.url, auth: { none: true } } });
    expect(registered.statusCode).toBe(201);
    const id = (await invoke('doomed.count', { steps: 40 }, '?async=true')).json().execution_id as string;
    await until('the upstream task reports a step', async () => (/^step/.test((await execution(id)).progress_message ?? '') ? true : undefined), 10_000, 100);
    await doomed.close();
    expect(await ended(id, 15_000)).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', retryable: true, message: expect.stringContaining("Upstream 'doomed'") } });
    const running = (await suite.t.request({ method: 'GET', url: '/v1/executions?status=running', key })).json();
    expect(running.executions ?? []).toEqual([]);
  });
});

describeEachEngine('an upstream task when its process shuts down', (mode) => {
  let server: SdkMcpServer;
  let cleanup: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    server = await startTaskServer();
  });
  afterAll(async () => {
    await server.close();
    await cleanup?.();
  });

  it('cancels the upstream task (tasks/cancel) when a shutdown aborts the execution past its grace, and the row names it', async () => {
    const prepared = await mode.prepare();
    cleanup = prepared.cleanup;
    const app = await startTestApp({ env: { ...prepared.env, ...ENV, SHUTDOWN_GRACE_SECONDS: '1' } });
    let closed = false;
    try {
      const { key } = await app.createAccount('up-tasks-shutdown');
      expect((await app.request({ method: 'POST', url: '/v1/upstreams', key, payload: { name: 'tasker', transport: 'streamable-http', url: server.url, auth: { none: true } } })).statusCode).toBe(201);
      const id = (await app.request({ method: 'POST', url: '/v1/tools/tasker.count/invoke?async=true', key, payload: { inputs: { steps: 40 } } })).json().execution_id as string;
      const rows = app.app.get(DataSource).getRepository(Execution);
      const kept = await until('the upstream task is kept with the execution', async () => (await rows.findOneBy({ id }))?.upstream_task ?? undefined, 10_000, 100);
      const cancelledBefore = server.cancelled;
      await app.close();
      closed = true;
      expect(server.methods).toContain('tasks/cancel');
      await until('the upstream task stopped', async () => (server.cancelled > cancelledBefore ? true : undefined), 5_000);
      expect(kept).toMatchObject({ task_id: expect.any(String) });
    } finally {
      if (!closed) await app.close();
    }
  });
});
