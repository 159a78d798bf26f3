import Fastify, { type FastifyInstance } from 'fastify';
import type { Principal } from '../identity/principal';
import { openBroadcast } from '../common/broadcast';
import { McpCancellations } from './mcp-cancellations';
import { McpEndpoint } from './mcp-endpoint';
import type { McpTools } from './mcp-tools';

/** The endpoint on a bare Fastify, over tools whose call fails the way a lost database would. */
describe('McpEndpoint', () => {
  const principal = { keyId: 'key_1', scopes: new Set(['tools:invoke']) } as unknown as Principal;
  const logged: unknown[] = [];
  let app: FastifyInstance;
  let endpoint: McpEndpoint;

  beforeAll(async () => {
    const failingTools = { call: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.7:5432 (password=hunter2)')) } as unknown as McpTools;
    endpoint = new McpEndpoint(failingTools, new McpCancellations(openBroadcast('', 'test')));
    await endpoint.onModuleInit();
    app = Fastify({ logger: { level: 'error', stream: { write: (line: string) => void logged.push(JSON.parse(line)) } } });
    app.post('/mcp', (request, reply) => endpoint.handle(principal, request, reply));
  });

  afterAll(async () => {
    await app.close();
    await endpoint.onApplicationShutdown();
  });

  it('answers an unexpected failure with a generic JSON-RPC error naming the request, and logs the cause', async () => {
    const answer = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'json-transform', arguments: {} } },
    });
    expect(answer.statusCode).toBe(200);
    const { id, error } = answer.json();
    expect(id).toBe(3);
    expect(error.code).toBe(-32603);
    expect(error.message).toMatch(/An unexpected error occurred\. .* request id \S+\.$/);
    expect(answer.body).not.toMatch(/ECONNREFUSED|hunter2/);
    expect(logged).toEqual([expect.objectContaining({ msg: 'unexpected error in MCP tools/call', err: expect.objectContaining({ message: expect.stringContaining('ECONNREFUSED') }) })]);
  });
});
