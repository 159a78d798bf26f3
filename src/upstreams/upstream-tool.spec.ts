import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { AppException } from '../common/errors';
import { EgressRefusedError } from '../tools/sdk/network-errors';
import { ToolError } from '../tools/sdk';
import { callOutcome, registeredUpstreamTool, resultOf, unreachable, type UpstreamCalls } from './upstream-tool';
import type { DiscoveredTool, Upstream } from './upstream.entity';

const upstream = { id: 'up_1', name: 'calc', url: 'http://127.0.0.1:1/mcp', auth: { none: true }, timeout_seconds: 20 } as Upstream;
const sum: DiscoveredTool = {
  name: 'sum',
  description: 'Adds',
  inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  outputSchema: { type: 'object', properties: { total: { type: 'number' } }, required: ['total'] },
  annotations: { readOnlyHint: true, idempotentHint: true },
};

describe('an upstream tool as the runner runs it', () => {
  const calls: UpstreamCalls = {
    stdio: () => Promise.reject(new Error('no stdio here')),
    ownerSecret: async () => undefined,
    runsAsync: async () => false,
    rememberTask: async () => undefined,
    called: async () => undefined,
  };
  const tool = registeredUpstreamTool(upstream, sum, calls);

  it('is named <upstream>.<tool>, with the upstream timeout and its annotations as effects', () => {
    expect(tool.definition).toMatchObject({ id: 'calc.sum', timeout: 20, effects: 'read', idempotent: true, cacheable: false });
    expect(tool.detail).toMatchObject({ kind: 'upstream', upstream: 'calc', input_schema: sum.inputSchema, output_schema: sum.outputSchema });
  });

  it('refuses input its inputSchema refuses, naming the parameter', () => {
    expect(tool.validateInput({ a: 1, b: 2 })).toEqual({ a: 1, b: 2 });
    const wrong = (() => {
      try {
        tool.validateInput({ a: 'one', b: 2 });
      } catch (err) {
        return err as AppException;
      }
    })();
    expect(wrong?.body).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'a' } });
    expect(() => tool.validateInput({ a: 1 })).toThrow(/Missing required parameter: b/);
  });

  it('checks structuredContent against the outputSchema', () => {
    expect(tool.outputProblem({ total: 3 })).toBeNull();
    expect(tool.outputProblem({ total: 'three' })).toMatch(/total/);
  });

  it('answers structuredContent with an outputSchema, content without, and isError as a ToolError', () => {
    expect(resultOf(upstream, sum, { content: [{ type: 'text', text: '3' }], structuredContent: { total: 3 } })).toEqual({ total: 3 });
    const plain = { ...sum, outputSchema: undefined };
    expect(resultOf(upstream, plain, { content: [{ type: 'text', text: '3' }] })).toEqual({ content: [{ type: 'text', text: '3' }] });
    expect(() => resultOf(upstream, sum, { isError: true, content: [{ type: 'text', text: 'division by zero' }] })).toThrow(/calc.*sum.*division by zero/);
  });

  it('names an egress refusal as the registration’s fault and other failures as retryable', () => {
    const refused = unreachable(upstream, new TypeError('fetch failed', { cause: new EgressRefusedError('10.0.0.1', '10.0.0.1', 'private') }));
    expect(refused).toBeInstanceOf(ToolError);
    expect(refused).toMatchObject({ retryable: false, message: expect.stringContaining('egress policy refuses') });
    const down = unreachable(upstream, Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }));
    expect(down).toMatchObject({ retryable: true, message: expect.stringContaining('ECONNREFUSED') });
  });

  it('names a JSON-RPC error the upstream answered as its refusal, not retryable; a timeout stays retryable', () => {
    const answered = unreachable(upstream, new ProtocolError(-32602, 'MCP error -32602: Invalid arguments for tool sum'));
    expect(answered).toMatchObject({ retryable: false, message: "Upstream 'calc' refused the call: MCP error -32602: Invalid arguments for tool sum", details: { upstream: 'calc', rpc_code: -32602 } });
    expect(unreachable(upstream, new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out'))).toMatchObject({ retryable: true });
  });

  it('classes how a call ended for the metrics and the audit log', () => {
    expect(callOutcome(upstream, undefined, false)).toBe('ok');
    expect(callOutcome(upstream, new Error('aborted'), true)).toBe('cancelled');
    expect(callOutcome(upstream, new TypeError('fetch failed', { cause: new EgressRefusedError('10.0.0.1', '10.0.0.1', 'private') }), false)).toBe('refused');
    expect(callOutcome(upstream, Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }), false)).toBe('unavailable');
    expect(callOutcome(upstream, new ToolError('HTTP 503', { retryable: true }), false)).toBe('unavailable');
    expect(callOutcome(upstream, new ToolError('bad id', { code: 'INVALID_INPUT' }), false)).toBe('invalid_input');
    expect(callOutcome(upstream, new ProtocolError(-32602, 'Invalid arguments'), false)).toBe('failed');
  });
});
