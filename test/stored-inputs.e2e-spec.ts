/**
 * Credentials in a call's input: `secret` inputs and the values of credential headers
 * in `headers` inputs reach the tool as given, and are redacted wherever the input is kept or
 * echoed — the execution row (REST GET /v1/executions/{id}, MCP's execution resource), the queued
 * job (sealed with SECRETS_KEY) and validation errors.
 */
import { randomBytes } from 'node:crypto';
import { startRecordingServer, type RecordingServer } from './support/recording-server';
import { describeEachEngine } from './support/engines';
import { until } from './support/poll';
import { useTestApp } from './support/app';
import { ToolCatalogue } from '../src/tools/tool-catalogue';

const CREDENTIAL = 'Bearer hunter2-in-a-header';
const HEADERS = { Authorization: CREDENTIAL, 'X-Api-Key': 'hunter2-api-key', Cookie: 'session=hunter2-cookie', 'X-Trace': 'kept-as-given' };
const STORED_HEADERS = { Authorization: '[REDACTED]', 'X-Api-Key': '[REDACTED]', Cookie: '[REDACTED]', 'X-Trace': 'kept-as-given' };

describeEachEngine('stored inputs', (mode) => {
  const suite = useTestApp(mode, { env: { EGRESS_ALLOW: '127.0.0.0/8', SECRETS_KEY: randomBytes(32).toString('base64') } });
  let upstream: RecordingServer;

  beforeAll(async () => {
    upstream = await startRecordingServer(() => ({ status: 200, body: 'ok' }));
  });
  afterAll(() => upstream.close());
  beforeEach(() => upstream.clear());

  const invoke = (payload: object) => suite.t.request({ method: 'POST', url: '/v1/tools/health-check/invoke', key: suite.acme.key, payload });
  const execution = async (id: string) => (await suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key: suite.acme.key })).json();
  const mcp = async (message: object) =>
    (await suite.t.request({ method: 'POST', url: '/v1/mcp', key: suite.acme.key, headers: { accept: 'application/json, text/event-stream' }, payload: { jsonrpc: '2.0', id: 1, ...message } })).json();

  const expectRedacted = (stored: { input: { headers: unknown } }) => {
    expect(stored.input.headers).toEqual(STORED_HEADERS);
    expect(JSON.stringify(stored)).not.toContain('hunter2');
  };

  it('a sync call: the tool sends the real headers; GET /v1/executions/{id} shows them redacted', async () => {
    const res = await invoke({ target: `${upstream.url}/health`, headers: HEADERS });
    expect(res.json()).toMatchObject({ status: 'success', result: { healthy: true } });
    expect(upstream.received[0].headers).toMatchObject({ authorization: CREDENTIAL, 'x-api-key': 'hunter2-api-key', cookie: 'session=hunter2-cookie' });
    expectRedacted(await execution(res.json().execution_id));
  });

  it('an async call: the queued job carries the real headers to the worker; the row never holds them', async () => {
    const res = await invoke({ inputs: { target: `${upstream.url}/health`, headers: HEADERS }, options: { async: true } });
    expect(res.statusCode).toBe(202);
    const id = res.json().execution_id;
    const done = await until('the async check to finish', async () => {
      const e = await execution(id);
      return e.status === 'queued' || e.status === 'running' ? undefined : e;
    });
    expect(done).toMatchObject({ status: 'success', result: { healthy: true } });
    expect(upstream.received[0].headers.authorization).toBe(CREDENTIAL);
    expectRedacted(done);
  });

  it('an MCP tools/call: the tool sends the real headers; the execution resource shows them redacted', async () => {
    const called = await mcp({ method: 'tools/call', params: { name: 'health-check', arguments: { target: `${upstream.url}/health`, headers: HEADERS } } });
    expect(called.result.isError).toBeFalsy();
    expect(upstream.received[0].headers.authorization).toBe(CREDENTIAL);
    const newest = (await suite.t.request({ method: 'GET', url: '/v1/executions?tool_id=health-check&limit=1', key: suite.acme.key })).json().executions[0];
    const read = await mcp({ method: 'resources/read', params: { uri: `tos://executions/${newest.id}` } });
    expectRedacted(JSON.parse(read.result.contents[0].text));
  });

  it('marks every built-in input of request headers (health-check, performance-profiling, …) for the rule', () => {
    const headerInputs = suite.t.app
      .get(ToolCatalogue)
      .all()
      .flatMap(({ definition }) => Object.entries(definition.input.properties).filter(([name]) => /headers$/i.test(name)).map(([name, input]) => [`${definition.id}.${name}`, input['x-request-headers']] as const));
    expect(headerInputs.map(([name]) => name)).toEqual(expect.arrayContaining(['health-check.headers', 'performance-profiling.headers']));
    expect(headerInputs.filter(([, marked]) => marked !== true)).toEqual([]);
  });

  it('a header value that fails validation is not echoed in the error', async () => {
    const res = await invoke({ target: `${upstream.url}/health`, headers: { Authorization: `Bearer hunter2-${'x'.repeat(5000)}` } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details).toMatchObject({ parameter: 'headers.Authorization', received: '[redacted]' });
    expect(res.body).not.toContain('hunter2');
    expect(upstream.received).toHaveLength(0);
  });
});
