import Fastify, { type FastifyInstance } from 'fastify';
import type { Principal } from '../identity/principal';
import { LocalBroadcast } from '../redis/broadcast';
import type { AppConfig } from '../config/app-config';
import type { InvocationService } from '../executions/request/invocation.service';
import type { ToolCatalogue } from '../tools/tool-catalogue';
import { McpCancellations } from './mcp-cancellations';
import { McpEndpoint } from './mcp-endpoint';
import { McpLegacyTasks } from './mcp-legacy-tasks';
import type { McpLibrary } from './mcp-library';
import { McpModernEndpoint } from './mcp-modern-endpoint';
import type { McpTasks } from './mcp-tasks';
import type { InputRounds } from '../executions/request/input-rounds';
import type { LiveUpdates } from '../executions/live/live-updates';
import type { AdmissionGate } from '../limits/admission-gate';
import { McpTools } from './mcp-tools';
import { OutageLog, type Dependency } from '../common/outages';
import { CatalogueChanges } from '../tools/catalogue-changes';
import type { PublishedWorkflows } from '../workflows/published-workflows';
import type { WorkflowRuns } from '../workflows/workflow-runs';
import type { ExecutionsService } from '../executions/request/executions.service';

/** Hears what the endpoint reports as an outage. */
class HeardOutages extends OutageLog {
  readonly heard: Dependency[] = [];
  constructor() {
    super({});
  }
  override report(dependency: Dependency): void {
    this.heard.push(dependency);
  }
}

/** The endpoint on a bare Fastify, over an invocation service that fails the way a lost database would. */
describe('McpEndpoint', () => {
  const principal = { keyId: 'key_1', scopes: new Set(['tools:invoke']), toolIds: null } as unknown as Principal;
  const logged: unknown[] = [];
  let app: FastifyInstance;
  let endpoint: McpEndpoint;
  let modern: McpModernEndpoint;
  const outages = new HeardOutages();

  beforeAll(async () => {
    const tool = { definition: { id: 'json-transform', examples: [], input: { type: 'object', properties: {} } }, validateInput: (input: unknown) => input };
    const registry = { all: () => [tool] } as unknown as ToolCatalogue;
    const failing = { invokeSync: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.7:5432 (password=hunter2)')) } as unknown as InvocationService;
    const tasks = {
      read: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.7:5432')),
      list: () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })),
    } as unknown as McpTasks;
    const published = { published: () => Promise.resolve([]) } as unknown as PublishedWorkflows;
    const tools = new McpTools(registry, failing, tasks, {} as AppConfig, {} as InputRounds, published, {} as WorkflowRuns, {} as ExecutionsService);
    tools.onApplicationBootstrap();
    const library = { read: () => Promise.reject(new Error('relation "executions" does not exist at 10.0.0.7')) } as unknown as McpLibrary;
    modern = new McpModernEndpoint(tools, tasks, outages, library, new CatalogueChanges(new LocalBroadcast('changes')), {} as LiveUpdates);
    const gate = { admitMore: (...[, , n]: number[]) => Promise.resolve({ admitted: n }) } as unknown as AdmissionGate;
    endpoint = new McpEndpoint(tools, new McpCancellations(new LocalBroadcast('test')), modern, gate, outages, library, new McpLegacyTasks(tasks, { MCP_PAGE_SIZE: 50 } as AppConfig));
    await endpoint.onModuleInit();
    app = Fastify({ logger: { level: 'error', stream: { write: (line: string) => void logged.push(JSON.parse(line)) } } });
    app.post('/mcp', (request, reply) => endpoint.handle(principal, request, reply));
  });

  afterEach(() => {
    logged.splice(0);
    outages.heard.splice(0);
  });

  afterAll(async () => {
    await app.close();
    await endpoint.onApplicationShutdown();
    await modern.onApplicationShutdown();
  });

  const revisions = {
    '2025-11-25': { headers: {}, meta: {} },
    '2026-07-28': {
      headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'json-transform' },
      meta: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } },
    },
  };

  it.each(Object.entries(revisions))('answers an unexpected failure with a generic JSON-RPC error naming the request, and logs the cause (%s)', async (_, { headers, meta }) => {
    const answer = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      payload: { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'json-transform', arguments: {}, ...meta } },
    });
    expect(answer.statusCode).toBe(200);
    const { id, error } = answer.json();
    expect(id).toBe(3);
    expect(error.code).toBe(-32603);
    expect(error.message).toMatch(/An unexpected error occurred\. .* request id \S+\.$/);
    expect(answer.body).not.toMatch(/ECONNREFUSED|hunter2/);
    expect(logged).toEqual([expect.objectContaining({ msg: 'unexpected error in MCP tools/call', err: expect.objectContaining({ message: expect.stringContaining('ECONNREFUSED') }) })]);
  });

  it.each(Object.entries(revisions))('hides an unexpected failure of resources/read the same way (%s)', async (revision, { meta }) => {
    const answer = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(revision === '2026-07-28' && { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'resources/read', 'mcp-name': 'tos://x' }),
      },
      payload: { jsonrpc: '2.0', id: 4, method: 'resources/read', params: { uri: 'tos://x', ...meta } },
    });
    expect(answer.json()).toMatchObject({ id: 4, error: { code: -32603, message: expect.stringMatching(/An unexpected error occurred/) } });
    expect(answer.body).not.toMatch(/relation|10\.0\.0\.7/);
    expect(logged).toEqual([expect.objectContaining({ msg: 'unexpected error in MCP resources/read' })]);
  });

  it('hides an unexpected failure of tasks/get the same way (2025-11-25)', async () => {
    const answer = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 6, method: 'tasks/get', params: { taskId: 'exec_1' } },
    });
    expect(answer.json()).toMatchObject({ id: 6, error: { code: -32603, message: expect.stringMatching(/An unexpected error occurred/) } });
    expect(answer.body).not.toMatch(/ECONNREFUSED|10\.0\.0\.7/);
    expect(logged).toEqual([expect.objectContaining({ msg: 'unexpected error in MCP tasks/get' })]);
  });

  it('hides an unexpected failure of tasks/get the same way (2026-07-28)', async () => {
    const answer = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tasks/get', 'mcp-name': 'exec_1' },
      payload: {
        jsonrpc: '2.0',
        id: 5,
        method: 'tasks/get',
        params: { taskId: 'exec_1', _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } } } },
      },
    });
    expect(answer.json()).toMatchObject({ id: 5, error: { code: -32603, message: expect.stringMatching(/An unexpected error occurred/) } });
    expect(answer.body).not.toMatch(/ECONNREFUSED|10\.0\.0\.7/);
    expect(logged).toEqual([expect.objectContaining({ msg: 'unexpected error in MCP tasks/get' })]);
  });

  it('answers a database outage with the retryable unavailable envelope, reported to the outage log and not logged per request (2025-11-25)', async () => {
    const answer = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 7, method: 'tasks/list', params: {} },
    });
    expect(answer.json()).toMatchObject({ id: 7, error: { code: -32603, data: { error: { code: 'INTERNAL_ERROR', retryable: true, details: { unavailable: 'database' } } } } });
    expect(outages.heard).toEqual(['database']);
    expect(logged).toEqual([]);
  });
});
