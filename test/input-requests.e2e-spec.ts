/**
 * Tools that ask their caller mid-run (`ctx.requestInput`): over MCP 2026-07-28 as
 * `input_required` (the official SDK v2 client answers through its elicitation handler and
 * retries on its own), over REST as an `input_required` answer the caller answers by calling
 * again; the state handed out cannot be altered or reused for another call, and calls that cannot
 * be asked fail saying so. cluster-apply's confirmation runs against the loopback Kubernetes API.
 */
import { Client as ClientV2, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { useTestApp } from './support/app';
import { describeEachEngine } from './support/engines';
import { DATABASE_MODES } from './support/databases';
import { startKubeApiServer, type KubeApiServer } from './support/kube/kube-api-server';
import { until } from './support/poll';
import { ConformanceFixturesModule } from './conformance/conformance-fixtures.module';

const MULTI_ROUND = '/v1/tools/conformance-test-input-required-result-multi-round/invoke';
const MODERN = '2026-07-28';

describe('Input requests', () => {
  let kube: KubeApiServer;
  const dir = mkdtempSync(path.join(tmpdir(), 'tos-input-'));
  const env: Record<string, string> = { EGRESS_ALLOW: '127.0.0.0/8' };
  // Registered before useTestApp's: the apiserver is up, and its kubeconfig in the settings, when the app starts.
  beforeAll(async () => {
    kube = await startKubeApiServer();
    env.KUBECONFIG = path.join(dir, 'kubeconfig');
    writeFileSync(env.KUBECONFIG, kube.kubeconfig());
  });
  const suite = useTestApp(DATABASE_MODES[0], { env, extensions: [ConformanceFixturesModule] });
  let url: URL;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    url = new URL(`${(await suite.t.app.getUrl()).replace('[::1]', '127.0.0.1')}/v1/mcp`);
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await kube?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const invoke = (payload: object, key = suite.acme.key, url = MULTI_ROUND) => suite.t.request({ method: 'POST', url, key, payload });

  it('asks a REST caller round by round: it answers with input_responses and the request_state it was handed', async () => {
    const first = await invoke({ inputs: {} });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({
      status: 'input_required',
      input_requests: { step1: { method: 'elicitation/create', params: { message: 'Step 1: What is your name?' } } },
      request_state: expect.any(String),
    });
    const second = await invoke({ inputs: {}, input_responses: { step1: { action: 'accept', content: { name: 'Ada' } } }, request_state: first.json().request_state });
    expect(second.json()).toMatchObject({ status: 'input_required', input_requests: { step2: { params: { message: 'Step 2: What is your favorite color?' } } } });
    expect(Object.keys(second.json().input_requests)).toEqual(['step2']);
    // The earlier answer travels in the state: only the new one is sent.
    const third = await invoke({ inputs: {}, input_responses: { step2: { action: 'accept', content: { color: 'green' } } }, request_state: second.json().request_state });
    expect(third.statusCode).toBe(200);
    expect(third.json()).toMatchObject({ status: 'success', result: { content: [{ type: 'text', text: 'Ada likes green' }] } });

    // A stopped round is no execution: only the finished call is recorded.
    const listed = (await suite.t.request({ method: 'GET', url: '/v1/executions?tool_id=conformance-test-input-required-result-multi-round', key: suite.acme.key })).json();
    expect(listed.executions.map(({ id }: { id: string }) => id)).toEqual([third.json().execution_id]);
  });

  it('refuses an altered state, one from another tool or key, and asks again for an answer that is missing or no answer', async () => {
    const first = (await invoke({ inputs: {} })).json();
    const [payload, mac] = first.request_state.split('.');
    const altered = `${Buffer.from(Buffer.from(payload, 'base64url').toString().replace('"a":{}', '"a":{"step1":{"action":"accept","content":{"name":"Eve"}}}')).toString('base64url')}.${mac}`;
    for (const state of [altered, `${first.request_state}x`, 'nonsense']) {
      const refused = await invoke({ inputs: {}, request_state: state });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'request_state' } });
    }
    const otherTool = await invoke({ inputs: {}, request_state: first.request_state }, suite.acme.key, '/v1/tools/conformance-test-input-required-result-elicitation/invoke');
    expect(otherTool.json().error.message).toMatch(/belongs to another call/);
    const other = await suite.t.createAccount('other-input');
    expect((await invoke({ inputs: {}, request_state: first.request_state }, other.key)).json().error.message).toMatch(/belongs to another call/);

    // Wrong key, or not an answer: the question again, never a guess.
    const wrong = await invoke({ inputs: {}, input_responses: { step9: { action: 'accept', content: { name: 'x' } }, step1: 'Ada' }, request_state: first.request_state });
    expect(wrong.json()).toMatchObject({ status: 'input_required', input_requests: { step1: expect.any(Object) } });
    expect((await invoke({ inputs: {}, input_responses: [] })).json().error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'input_responses' } });
  });

  it('tells an MCP 2025 caller, which cannot be asked, how to call the tool, or that the prompt needs a newer client', async () => {
    const { Client: ClientV1 } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport: TransportV1 } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const legacy = new ClientV1({ name: 'e2e-v1', version: '1.0.0' });
    await legacy.connect(new TransportV1(url, { requestInit: { headers: { authorization: `Bearer ${suite.acme.key}` } } }));
    closers.push(() => legacy.close());
    const answer = await legacy.callTool({ name: 'test_input_required_result_elicitation', arguments: {} });
    expect(answer.isError).toBe(true);
    expect(JSON.stringify(answer.content)).toMatch(/cannot carry \(an MCP 2025 call/);
    // A prompt that asks regardless of ctx.canAsk: invalid params saying why.
    await expect(legacy.getPrompt({ name: 'test_input_required_result_prompt' })).rejects.toThrow(/asks its caller for input, which only MCP 2026-07-28 clients answer/);
  });

  it('confirms a cluster-apply with an MCP 2026-07-28 client: its elicitation handler answers, the SDK retries, and only an accepted plan is applied', async () => {
    const asked: string[] = [];
    let answer: 'accept' | 'decline' = 'decline';
    const client = new ClientV2({ name: 'e2e-input', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler('elicitation/create', async ({ params }) => {
      asked.push(params.message);
      return answer === 'accept' ? { action: 'accept', content: { apply: true } } : { action: 'decline' };
    });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${suite.acme.key}` } } }));
    closers.push(() => client.close());
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    const manifest = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: confirmed-over-mcp\ndata:\n  tier: gold\n';

    const declined = await client.callTool({ name: 'cluster-apply', arguments: { manifest, confirm: true } });
    expect(declined.isError).toBe(true);
    expect(JSON.stringify(declined.content)).toMatch(/Not applied: the caller did not confirm \(decline\)/);
    expect(kube.get('ConfigMap', 'confirmed-over-mcp')).toBeUndefined();

    answer = 'accept';
    const applied = await client.callTool({ name: 'cluster-apply', arguments: { manifest, confirm: true } });
    expect(applied.structuredContent).toMatchObject({ counts: { created: 1, configured: 0, unchanged: 0 } });
    expect(kube.get('ConfigMap', 'confirmed-over-mcp')?.data).toEqual({ tier: 'gold' });
    expect(asked).toEqual(['Apply to the cluster? ConfigMap default/confirmed-over-mcp created.', 'Apply to the cluster? ConfigMap default/confirmed-over-mcp created.']);
  });

  it('refuses, with -32021 naming it, a question the client declared no capability for', async () => {
    const answer = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${suite.acme.key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': 'cluster-apply',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: {
          name: 'cluster-apply',
          arguments: { manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: never\ndata:\n  a: b\n', confirm: true },
          _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': { sampling: {} } },
        },
      }),
    });
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ id: 7, error: { code: -32021, data: { requiredCapabilities: { elicitation: {} } } } });
    expect(kube.get('ConfigMap', 'never')).toBeUndefined();
  });
});

describeEachEngine('Input requests of async executions', (mode) => {
  const suite = useTestApp(mode, { extensions: [ConformanceFixturesModule] });

  it('parks an async execution in input_required until POST /v1/executions/{id}/input answers, then runs it again with the answers', async () => {
    const execution = async (id: string) => (await suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key: suite.acme.key })).json();
    const waiting = (id: string, key: string) =>
      until(`${id} waiting on ${key}`, async () => {
        const row = await execution(id);
        return row.status === 'input_required' && row.input_requests[key] ? row : undefined;
      });
    const answer = (id: string, responses: object, key = suite.acme.key) => suite.t.request({ method: 'POST', url: `/v1/executions/${id}/input`, key, payload: { responses } });
    const queued = await suite.t.request({ method: 'POST', url: `${MULTI_ROUND}?async=true`, key: suite.acme.key, payload: {} });
    const id = queued.json().execution_id as string;

    const first = await waiting(id, 'step1');
    expect(first.input_requests).toEqual({ step1: expect.objectContaining({ method: 'elicitation/create' }) });
    // Nothing outstanding answered, another account, not waiting: refused, nothing changes.
    expect((await answer(id, { step9: { action: 'accept' } })).json().error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'input_responses', expected: ['step1'] } });
    expect((await answer(id, { step1: { action: 'accept', content: { name: 'Eve' } } }, (await suite.t.createAccount('other-async-input')).key)).statusCode).toBe(404);
    expect((await answer(id, { step1: 'Ada' })).statusCode).toBe(400);

    const accepted = await answer(id, { step1: { action: 'accept', content: { name: 'Ada' } } });
    expect(accepted.statusCode).toBe(202);
    expect(accepted.json()).toMatchObject({ id, status: 'queued' });
    await waiting(id, 'step2');
    await answer(id, { step2: { action: 'accept', content: { color: 'green' } } });
    const done = await until('the execution ended', async () => {
      const row = await execution(id);
      return ['success', 'error', 'cancelled'].includes(row.status) ? row : undefined;
    });
    expect(done).toMatchObject({ status: 'success', result: { content: [{ type: 'text', text: 'Ada likes green' }] } });
    expect(done.input_requests).toBeUndefined();
    expect((await answer(id, { step2: { action: 'accept' } })).json().error).toMatchObject({ code: 'CONFLICT' });

    // A waiting execution can be cancelled like any other.
    const another = (await suite.t.request({ method: 'POST', url: `${MULTI_ROUND}?async=true`, key: suite.acme.key, payload: {} })).json().execution_id as string;
    await waiting(another, 'step1');
    expect((await suite.t.request({ method: 'DELETE', url: `/v1/executions/${another}`, key: suite.acme.key })).statusCode).toBe(200);
    expect((await execution(another)).status).toBe('cancelled');
  });
});
