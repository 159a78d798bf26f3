import { runTool, toolFailure } from '@tos/sdk/testing';
import { startGatewayFake, type GatewayFake } from '../../../test/support/functions/gateway-fake';
import { FunctionInvokeTool } from './function-invoke.tool';

describe('function-invoke', () => {
  let gateway: GatewayFake;
  const config = () => ({ FUNCTIONS_GATEWAY_URL: gateway.url, FUNCTIONS_DOMAIN: 'fn.example.test' });
  const invoke = (input: Record<string, unknown>, extra = {}) => runTool(FunctionInvokeTool, input, { config: config(), ...extra });
  beforeAll(async () => {
    gateway = await startGatewayFake();
  });
  beforeEach(() => gateway.calls.splice(0));
  afterAll(() => gateway.close());

  it('calls a named function through the gateway with JSON, showing only the call headers', async () => {
    const out = await invoke({ function: 'echo', payload: { a: [1, 2] } });
    expect(out).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json', 'x-call-id': 'call-0001', 'x-duration-seconds': '0.001' },
      body: '{"a":[1,2]}',
      body_json: { a: [1, 2] },
      truncated: false,
      duration_ms: expect.any(Number),
    });
    expect(gateway.calls).toEqual([{ name: 'echo', method: 'POST', body: '{"a":[1,2]}', contentType: 'application/json' }]);
  });

  it('sends text, routes by host (Knative) and calls a full function URL', async () => {
    await expect(invoke({ function: 'echo', payload_text: 'plain words' })).resolves.toMatchObject({ body: 'plain words', body_json: null });
    expect(gateway.calls[0]).toMatchObject({ contentType: 'text/plain; charset=utf-8' });
    await expect(invoke({ function: 'echo', routing: 'host', namespace: 'billing', payload: { n: 1 } })).resolves.toMatchObject({ status: 200, body_json: { n: 1 } });
    expect(gateway.calls[1]).toMatchObject({ name: 'echo' });
    await expect(invoke({ url: `${gateway.url}/function/echo`, method: 'PUT', payload: 7 })).resolves.toMatchObject({ body: '7', body_json: 7 });
    expect(gateway.calls[2]).toMatchObject({ method: 'PUT' });
  });

  it('cuts a huge body at max_response_bytes', async () => {
    const out = await invoke({ function: 'huge', max_response_bytes: 4096 });
    expect(out).toMatchObject({ status: 200, truncated: true, body_json: null });
    expect(out.body).toHaveLength(4096);
  });

  it('an unknown function is the caller’s fault; a failing one is retryable with the gateway’s Retry-After', async () => {
    expect(await toolFailure(invoke({ function: 'nope' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'function', upstream: { status: 404 } } });
    expect(await toolFailure(invoke({ function: 'fail' }))).toMatchObject({ code: 'TOOL_ERROR', retryable: true, retryAfter: 4, details: { upstream: { service: 'functions', status: 502 } } });
    expect(await toolFailure(invoke({ function: 'echo' }, { config: { FUNCTIONS_GATEWAY_URL: 'http://127.0.0.1:1' } }))).toMatchObject({ code: 'TOOL_ERROR', retryable: true });
  });

  it('times out on timeout_ms as a retryable error', async () => {
    expect(await toolFailure(invoke({ function: 'slow', timeout_ms: 200 }))).toMatchObject({ code: 'TOOL_ERROR', retryable: true, message: expect.stringContaining('timed out') });
  });

  it.each([
    [{}, 'function'],
    [{ function: 'echo', url: 'http://127.0.0.1/x' }, 'url'],
    [{ function: 'Bad Name!' }, 'function'],
    [{ function: 'echo', payload: {}, payload_text: 'x' }, 'payload_text'],
    [{ function: 'echo', timeout_ms: 120_000 }, 'timeout_ms'],
  ])('%j is refused naming %s', async (input, parameter) => {
    expect(await toolFailure(invoke(input))).toMatchObject({ details: { parameter } });
  });

  it('refuses a gateway or a function URL at a refused address, naming where it came from', async () => {
    expect(await toolFailure(invoke({ function: 'echo' }, { egressAllow: '' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'FUNCTIONS_GATEWAY_URL' } });
    expect(await toolFailure(invoke({ url: 'http://169.254.169.254/latest/meta-data' }, { egressAllow: '' }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'url' } });
    expect(gateway.calls).toEqual([]);
  });

  it('stops when cancelled mid-call', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('cancelled')), 200);
    const started = Date.now();
    await expect(invoke({ url: `${gateway.url}/function/slow?ms=20000` }, { signal: controller.signal })).rejects.toThrow('cancelled');
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
