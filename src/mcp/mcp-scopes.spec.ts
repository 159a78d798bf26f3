import type { Principal } from '../identity/principal';
import type { Scope } from '../identity/scopes';
import { missingScopes } from './mcp-scopes';

const holding = (...scopes: Scope[]): Pick<Principal, 'scopes'> => ({ scopes: new Set(scopes) });
const request = (method: unknown) => ({ jsonrpc: '2.0', id: 1, method });

describe('missingScopes', () => {
  it('names the scope a method needs and the principal lacks', () => {
    expect(missingScopes(holding('tools:read'), request('tools/call'))).toEqual(['tools:invoke']);
    expect(missingScopes(holding('tools:read', 'tools:invoke'), request('tools/call'))).toEqual([]);
    expect(missingScopes(holding(), request('tasks/cancel'))).toEqual(['executions:cancel']);
    // A change subscription tells of the tool list: a listing (an OAuth token gets the step-up for it).
    expect(missingScopes(holding('tools:invoke'), request('subscriptions/listen'))).toEqual(['tools:read']);
  });

  it('asks what GET /v1/executions/{id} asks of a read of an execution, as a resource or through execution.status', () => {
    const withParams = (method: string, params: Record<string, unknown>) => ({ ...request(method), params });
    expect(missingScopes(holding('tools:read'), withParams('resources/read', { uri: 'tos://executions/exec_1' }))).toEqual(['executions:read']);
    expect(missingScopes(holding('tools:read'), withParams('resources/read', { uri: 'tos://tools/json-transform/docs' }))).toEqual([]);
    // It reads: no tools:invoke needed, executions:read is.
    expect(missingScopes(holding('executions:read'), withParams('tools/call', { name: 'execution.status' }))).toEqual([]);
    expect(missingScopes(holding('tools:invoke'), withParams('tools/call', { name: 'execution.status' }))).toEqual(['executions:read']);
  });

  it('asks nothing of methods that need no scope, of notifications and of what is not a request', () => {
    for (const body of [request('initialize'), request('server/discover'), request('ping'), { jsonrpc: '2.0', method: 'notifications/cancelled' }, null, 'tools/call', request('__proto__'), request('toString'), request(7)]) {
      expect(missingScopes(holding(), body)).toEqual([]);
    }
  });

  it('gathers a batch, each scope once', () => {
    expect(missingScopes(holding(), [request('tools/list'), request('tools/call'), request('resources/read'), null])).toEqual(['tools:read', 'tools:invoke']);
  });
});
