/**
 * What an upstream MCP server does during a call, passed through to our execution
 * (docs/upstreams.md#what-is-passed-through-and-what-is-not), on both engines, against the
 * official reference server on 127.0.0.1: its progress notifications as the execution's progress,
 * its elicitation as the execution's input_required (sync and async) and the caller's answer sent
 * back, an upstream killed mid-call ending the execution with a retryable error, a task-only tool
 * run as the upstream's task, and a kept session the upstream lost (it restarted) replaced by a new one; and two
 * servers of our own made with the official SDK, one speaking only 2026-07-28 (SDK v2: discovery,
 * calls, progress, cancellation, input_required) and one only 2025-11-25 (SDK v1: discovery and
 * calls), each counted to open no session per call.
 */
import { randomBytes } from 'node:crypto';
import { useTestApp } from './support/app';
import { describeEachEngine } from './support/engines';
import { startEverything, useEverything } from './support/everything-server';
import { startLegacyOnlyServer, startModernOnlyServer } from './support/sdk-mcp-servers';
import { until } from './support/poll';

const ENV = { SECRETS_KEY: randomBytes(32).toString('base64'), EGRESS_ALLOW: '127.0.0.1' };

describeEachEngine('upstream MCP protocol pass-through', (mode) => {
  const suite = useTestApp(mode, { env: ENV });
  const reference = useEverything();

  let accounts = 0;
  /** A new account with the upstream at `url` registered as `name`: its key and the registration. */
  const registering = async (url: string, name: string) => {
    const account = await suite.t.createAccount(`pass-${++accounts}`);
    const registered = await suite.t.request({ method: 'POST', url: '/v1/upstreams', key: account.key, payload: { name, transport: 'streamable-http', url, auth: { none: true } } });
    expect(registered.statusCode).toBe(201);
    return { key: account.key, upstream: registered.json() };
  };
  const owner = async (url = reference.server.url) => (await registering(url, 'everything')).key;
  const invoke = (key: string, toolId: string, payload: object, query = '') => suite.t.request({ method: 'POST', url: `/v1/tools/${toolId}/invoke${query}`, key, payload });
  const execution = async (key: string, id: string) => (await suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key })).json();
  const ended = (key: string, id: string, ms = 20_000) =>
    until(`execution ${id} ends`, async () => {
      const row = await execution(key, id);
      return ['queued', 'running'].includes(row.status) ? undefined : row;
    }, ms);

  it("reports the upstream's progress notifications as the execution's progress", async () => {
    const key = await owner();
    const queued = (await invoke(key, 'everything.trigger-long-running-operation', { inputs: { duration: 4, steps: 8 } }, '?async=true')).json();
    const midway = await until('progress between 0 and 100', async () => {
      const row = await execution(key, queued.execution_id);
      return row.status === 'running' && row.progress > 0 && row.progress < 100 ? row : undefined;
    }, 10_000);
    // server-everything sends progress i of total 8: whole eighths, as percentages.
    expect([13, 25, 38, 50, 63, 75, 88]).toContain(midway.progress);
    // Followed as a built-in tool's is: the event stream carries the progress still to come, then the result.
    const streamed = (await suite.t.request({ method: 'GET', url: `/v1/executions/${queued.execution_id}/events`, key })).body.split('\n\n');
    const progressed = streamed.filter((block) => block.startsWith('event: progress')).map((block) => JSON.parse(block.split('\n')[1].slice(6)).progress as number);
    expect(progressed.length).toBeGreaterThan(0);
    expect(progressed.every((percent) => percent >= midway.progress)).toBe(true);
    expect(streamed.some((block) => block.startsWith('event: result'))).toBe(true);
    expect(await ended(key, queued.execution_id)).toMatchObject({ status: 'success', progress: 100 });
  });

  it("passes the upstream's elicitation to a REST caller as input_required and its answer back", async () => {
    const key = await owner();
    const first = await invoke(key, 'everything.trigger-elicitation-request', { inputs: {} });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({
      status: 'input_required',
      input_requests: {
        'upstream-elicitation-1': { method: 'elicitation/create', params: { message: 'Please provide inputs for the following fields:', requestedSchema: { required: ['name'] } } },
      },
    });
    const answered = await invoke(key, 'everything.trigger-elicitation-request', {
      inputs: {},
      input_responses: { 'upstream-elicitation-1': { action: 'accept', content: { name: 'Ada Lovelace', check: true } } },
      request_state: first.json().request_state,
    });
    expect(answered.json()).toMatchObject({ status: 'success' });
    const text = JSON.stringify(answered.json().result.content);
    expect(text).toContain('User provided the requested information');
    expect(text).toContain('Ada Lovelace');

    const declined = await invoke(key, 'everything.trigger-elicitation-request', {
      inputs: {},
      input_responses: { 'upstream-elicitation-1': { action: 'decline' } },
      request_state: first.json().request_state,
    });
    expect(declined.json()).toMatchObject({ status: 'success' });
    expect(JSON.stringify(declined.json().result.content)).not.toContain('Ada Lovelace');
  });

  it('parks an async call in input_required on an upstream question, then calls the upstream again with the answer', async () => {
    const key = await owner();
    const id = (await invoke(key, 'everything.trigger-elicitation-request', { inputs: {} }, '?async=true')).json().execution_id as string;
    const waiting = await until('waiting on the upstream question', async () => {
      const row = await execution(key, id);
      return row.status === 'input_required' ? row : undefined;
    }, 10_000);
    expect(Object.keys(waiting.input_requests)).toEqual(['upstream-elicitation-1']);
    const answered = await suite.t.request({ method: 'POST', url: `/v1/executions/${id}/input`, key, payload: { responses: { 'upstream-elicitation-1': { action: 'accept', content: { name: 'Grace Hopper' } } } } });
    expect(answered.statusCode).toBe(202);
    const done = await ended(key, id);
    expect(done).toMatchObject({ status: 'success' });
    expect(JSON.stringify(done.result.content)).toContain('Grace Hopper');
  });

  it('refuses an upstream question an MCP 2025 caller cannot answer, with the reason', async () => {
    const key = await owner();
    const answer = await suite.t.request({
      method: 'POST',
      url: '/v1/mcp',
      key,
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'everything.trigger-elicitation-request', arguments: {} } },
      headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    });
    const result = answer.json().result;
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/asks its caller for input|cannot be asked/);
  });

  it('ends a call whose upstream dies mid-way with a retryable error, nothing left running', async () => {
    const doomed = await startEverything();
    try {
      const key = await owner(doomed.url);
      const queued = (await invoke(key, 'everything.trigger-long-running-operation', { inputs: { duration: 30, steps: 30 } }, '?async=true')).json();
      await until('the long call reports progress', async () => ((await execution(key, queued.execution_id)).progress > 0 ? true : undefined), 10_000);
      doomed.child.kill('SIGKILL');
      const row = await ended(key, queued.execution_id, 15_000);
      expect(row).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', retryable: true, message: expect.stringContaining("Upstream 'everything'") } });
      const running = (await suite.t.request({ method: 'GET', url: '/v1/executions?status=running', key })).json();
      expect(running.executions ?? []).toEqual([]);
    } finally {
      doomed.child.kill('SIGKILL');
    }
  });

  it("lists a tool the upstream runs only as a task and runs it as the upstream's task, its status messages as progress", async () => {
    const key = await owner();
    const listed = (await suite.t.request({ method: 'GET', url: '/v1/tools?limit=100', key })).json().tools.map((tool: { id: string }) => tool.id);
    expect(listed).toContain('everything.simulate-research-query');
    const id = (await invoke(key, 'everything.simulate-research-query', { inputs: { topic: 'tides' } }, '?async=true')).json().execution_id as string;
    const stage = await until('a stage of the research task', async () => {
      const row = await execution(key, id);
      return /^(Gathering sources|Analyzing content|Synthesizing findings|Generating report)\.\.\.$/.test(row.progress_message ?? '') ? row : undefined;
    }, 10_000, 100);
    expect(stage.status).toBe('running');
    const done = await ended(key, id);
    expect(done).toMatchObject({ status: 'success' });
    expect(JSON.stringify(done.result.content)).toContain('Research Report: tides');
  });

  it("passes an upstream task's question to an async caller, then runs a new task answered from the caller's answer", async () => {
    const key = await owner();
    const id = (await invoke(key, 'everything.simulate-research-query', { inputs: { topic: 'python', ambiguous: true } }, '?async=true')).json().execution_id as string;
    const waiting = await until('waiting on the upstream task question', async () => {
      const row = await execution(key, id);
      return row.status === 'input_required' ? row : undefined;
    }, 15_000, 100);
    expect(waiting.input_requests['upstream-elicitation-1']).toMatchObject({ method: 'elicitation/create', params: { message: expect.stringContaining('"python" could have multiple interpretations') } });
    const answered = await suite.t.request({ method: 'POST', url: `/v1/executions/${id}/input`, key, payload: { responses: { 'upstream-elicitation-1': { action: 'accept', content: { interpretation: 'snake' } } } } });
    expect(answered.statusCode).toBe(202);
    const done = await ended(key, id, 30_000);
    expect(done).toMatchObject({ status: 'success' });
    expect(JSON.stringify(done.result.content)).toContain('Research Report: python (snake)');
  });

  it('calls again on a new session when the upstream restarted and forgot the kept one', async () => {
    let restarting = await startEverything();
    try {
      const key = await owner(restarting.url);
      const sum = async (a: number) => (await invoke(key, 'everything.get-sum', { a, b: 1 })).json();
      expect(await sum(1)).toMatchObject({ status: 'success' });
      expect(await sum(2)).toMatchObject({ status: 'success' });
      restarting.child.kill('SIGKILL');
      await new Promise((resolve) => restarting.child.once('exit', resolve));
      restarting = await startEverything(restarting.port);
      const again = await sum(3);
      expect(again).toMatchObject({ status: 'success' });
      expect(JSON.stringify(again.result.content)).toContain('4');
    } finally {
      restarting.child.kill('SIGKILL');
    }
  });

  it.each([
    ['only 2026-07-28 (SDK v2): server/discover, no initialize', startModernOnlyServer, ['server/discover', 'tools/list']],
    ['only 2025-11-25 (SDK v1): the initialize fallback', startLegacyOnlyServer, ['initialize', 'tools/list']],
  ])('discovers and calls a server speaking %s', async (_, start, handshake) => {
    const server = await start();
    try {
      const { key, upstream } = await registering(server.url, 'own');
      expect(upstream).toMatchObject({ status: { last_error: null } });
      expect(upstream.tools).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'add', description: 'Adds a and b' })]));
      expect(server.methods).toEqual(expect.arrayContaining(handshake));
      const rest = (await invoke(key, 'own.add', { a: 20, b: 22 })).json();
      expect(rest).toMatchObject({ status: 'success', result: { content: [{ type: 'text', text: 'sum=42' }] } });
      const viaMcp = await suite.t.request({
        method: 'POST',
        url: '/v1/mcp',
        key: key,
        payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'own.add', arguments: { a: 1, b: 2 } } },
        headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      });
      expect(viaMcp.json().result.isError).toBeFalsy();
      expect(JSON.stringify(viaMcp.json().result.content)).toContain('sum=3');
      expect((await invoke(key, 'own.add', { a: 'x', b: 1 })).json().error).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'a' } });
      if (handshake.includes('server/discover')) expect(server.methods).not.toContain('initialize');
      // Calls reuse the session the first call opened: no handshake of their own.
      const handshakes = server.methods.filter((method) => method === handshake[0]).length;
      for (const a of [1, 2, 3]) expect((await invoke(key, 'own.add', { a, b: 1 })).json()).toMatchObject({ status: 'success' });
      expect(server.methods.filter((method) => method === handshake[0])).toHaveLength(handshakes);
    } finally {
      await server.close();
    }
  });

  it('passes progress and cancellation through to an upstream speaking only 2026-07-28', async () => {
    const server = await startModernOnlyServer();
    try {
      const { key } = await registering(server.url, 'own');
      const queued = (await invoke(key, 'own.count', { inputs: { steps: 40 } }, '?async=true')).json();
      const midway = await until('progress from the 2026 upstream', async () => {
        const row = await execution(key, queued.execution_id);
        return row.status === 'running' && row.progress > 0 ? row : undefined;
      }, 10_000);
      expect(midway.progress).toBeLessThan(100);
      expect((await suite.t.request({ method: 'DELETE', url: `/v1/executions/${queued.execution_id}`, key: key })).statusCode).toBeLessThan(300);
      expect(await ended(key, queued.execution_id, 10_000)).toMatchObject({ status: 'cancelled' });
      await until('the upstream saw the request cancelled', async () => (server.cancelled > 0 ? true : undefined), 5_000);
    } finally {
      await server.close();
    }
  });

  it("passes a 2026-07-28 upstream's input_required to the caller and its answer back", async () => {
    const server = await startModernOnlyServer();
    try {
      const { key } = await registering(server.url, 'own');
      const first = (await invoke(key, 'own.greet', { inputs: {} })).json();
      expect(first).toMatchObject({ status: 'input_required', input_requests: { 'upstream-elicitation-1': { method: 'elicitation/create', params: { message: 'Your name?' } } } });
      const answered = await invoke(key, 'own.greet', {
        inputs: {},
        input_responses: { 'upstream-elicitation-1': { action: 'accept', content: { name: 'Ada' } } },
        request_state: first.request_state,
      });
      expect(answered.json()).toMatchObject({ status: 'success', result: { content: [{ type: 'text', text: 'hello Ada' }] } });
    } finally {
      await server.close();
    }
  });
});
