import { classifyInboundRequest } from '@modelcontextprotocol/server';
import type { FastifyRequest } from 'fastify';
import { McpRoutes } from './mcp-route';

const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const call = (params: object, extra: object = {}) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params, ...extra });

/** Bodies around every rung the classifier reads, each to be sent with two different argument sets. */
const BODIES: Record<string, (args: object) => unknown> = {
  '2025 call': (args) => call({ name: 'json-transform', arguments: args }),
  '2025 call, string id': (args) => ({ ...call({ name: 'json-transform', arguments: args }), id: 'a' }),
  '2025 call with a progress token': (args) => call({ name: 'json-transform', arguments: args, _meta: { progressToken: 'p' } }),
  '2026 call': (args) => call({ name: 'json-transform', arguments: args, _meta: ENVELOPE }),
  '2026 call with a progress token': (args) => call({ name: 'json-transform', arguments: args, _meta: { ...ENVELOPE, progressToken: 7 } }),
  'envelope naming 2025-11-25': (args) => call({ name: 'x', arguments: args, _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } }),
  'envelope without capabilities': (args) => call({ name: 'x', arguments: args, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } }),
  'envelope with capabilities not an object': (args) => call({ name: 'x', arguments: args, _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': 'all' } }),
  'envelope with a version not a string': (args) => call({ name: 'x', arguments: args, _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': 2026 } }),
  '_meta null': (args) => call({ name: 'x', arguments: args, _meta: null }),
  'progress token not an integer': (args) => call({ name: 'x', arguments: args, _meta: { progressToken: 1.5 } }),
  'progress token past 1e308': (args) => call({ name: 'x', arguments: args, _meta: { progressToken: JSON.parse('1e400') } }),
  'progress token null': (args) => call({ name: 'x', arguments: args, _meta: { progressToken: null } }),
  'no params': () => ({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  'params an array': (args) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: [args] }),
  'id 1.5': (args) => ({ ...call({ name: 'x', arguments: args }), id: 1.5 }),
  'id null': (args) => ({ ...call({ name: 'x', arguments: args }), id: null }),
  'an extra member': (args) => call({ name: 'x', arguments: args }, { extra: true }),
  'jsonrpc 1.0': (args) => ({ ...call({ name: 'x', arguments: args }), jsonrpc: '1.0' }),
  'method not a string': (args) => ({ ...call({ name: 'x', arguments: args }), method: 5 }),
  'a notification': (args) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: JSON.stringify(args) } }),
  '2026 notification': () => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: ENVELOPE } }),
  initialize: (args) => ({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: args, clientInfo: { name: 'c', version: '1' } } }),
  '2026 initialize': (args) => ({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { capabilities: args, _meta: ENVELOPE } }),
  'a response': (args) => ({ jsonrpc: '2.0', id: 1, result: args }),
  'a batch': (args) => [call({ name: 'x', arguments: args })],
  'a string': () => 'tools/call',
};

const HEADERS: Record<string, string>[] = [
  {},
  { 'mcp-protocol-version': '2025-11-25' },
  { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'json-transform' },
  { 'mcp-protocol-version': ' 2026-07-28 ', 'mcp-method': 'tools/list' },
  { 'mcp-protocol-version': '2026-07-28' },
  { 'mcp-protocol-version': 'soon' },
];

const request = (headers: Record<string, string>, body: unknown) => ({ headers, body }) as unknown as FastifyRequest;
const sdkRoute = (headers: Record<string, string>, body: unknown) =>
  classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: headers['mcp-protocol-version'],
    mcpMethodHeader: headers['mcp-method'],
    mcpNameHeader: headers['mcp-name'],
    body,
  });

describe('McpRoutes.routeOf', () => {
  const routes = new McpRoutes();
  const routeOf = (post: FastifyRequest) => routes.routeOf(post);

  it.each(Object.keys(BODIES))('routes %s as the SDK classifier does, the first time and every time after', (name) => {
    for (const headers of HEADERS) {
      for (const args of [{ a: 1 }, { b: [2, 3] }, { a: 1 }]) {
        const body = BODIES[name](args);
        const route = routeOf(request(headers, body));
        expect(route).toEqual(sdkRoute(headers, body));
        // A 2026 route carries this request's own message, never the one its shape was first seen with.
        if (route.kind === 'modern') expect(route.message).toBe(body);
      }
    }
  });

  it('tells apart shapes that differ only where the classifier looks', () => {
    const headers = HEADERS[2];
    expect(routeOf(request(headers, BODIES['2026 call']({})))).toMatchObject({ kind: 'modern' });
    expect(routeOf(request(headers, BODIES['envelope without capabilities']({})))).toMatchObject({ kind: 'reject' });
    expect(routeOf(request({}, BODIES['2025 call']({})))).toMatchObject({ kind: 'legacy' });
    expect(routeOf(request({}, BODIES['_meta null']({})))).toMatchObject({ kind: 'reject' });
  });
});
