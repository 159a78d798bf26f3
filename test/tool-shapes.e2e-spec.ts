/**
 * What clients see of every built-in tool, byte for byte: the REST read (GET /v1/tools/{id}),
 * MCP's tools/list entry, and the tool's schemas in the OpenAPI document. The snapshot was taken
 * before tool definitions moved to one typed form; a change here is a change clients see.
 */
import { componentName } from '../src/openapi/tool-operations';
import { useTestApp } from './support/app';
import { DATABASE_MODES } from './support/databases';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('Tool shapes clients see', () => {
  const suite = useTestApp(DATABASE_MODES.find((mode) => mode.name === 'pglite')!, { env: { MCP_PAGE_SIZE: '100', PUBLIC_URL: 'https://tools.example' } });
  let ids: string[];

  beforeAll(async () => {
    const list = await suite.t.request({ method: 'GET', url: '/v1/tools?limit=100', key: suite.acme.key });
    ids = (list.json() as { tools: { id: string }[] }).tools.map((tool) => tool.id).sort();
  });

  it('lists the 28 built-in tools', () => {
    expect(ids).toHaveLength(28);
  });

  it('reads each tool as it always has (GET /v1/tools/{id})', async () => {
    for (const id of ids) {
      const read = await suite.t.request({ method: 'GET', url: `/v1/tools/${id}`, key: suite.acme.key });
      expect(read.statusCode).toBe(200);
      expect(read.body).toMatchSnapshot(id);
    }
  });

  it('lists each tool over MCP as it always has (tools/list)', async () => {
    const answer = await suite.t.request({ method: 'POST', url: '/v1/mcp', key: suite.acme.key, headers: MCP_HEADERS, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(answer.statusCode).toBe(200);
    const tools = (answer.json() as { result: { tools: { name: string }[] } }).result.tools;
    // The 28 tools, and execution.status (docs/mcp.md#execution-status).
    expect(tools).toHaveLength(29);
    for (const tool of [...tools].sort((a, b) => a.name.localeCompare(b.name))) expect(JSON.stringify(tool)).toMatchSnapshot(tool.name);
  });

  it('publishes each tool in the OpenAPI document as it always has', async () => {
    const document = (await suite.t.request({ method: 'GET', url: '/v1/openapi.json' })).json() as { paths: Record<string, unknown>; components: { schemas: Record<string, unknown> } };
    for (const id of ids) {
      const base = componentName(id);
      const shapes = [document.paths[`/v1/tools/${id}/invoke`], ...['Input', 'Output', 'Success'].map((part) => document.components.schemas[`${base}${part}`])];
      expect(shapes.every(Boolean)).toBe(true);
      expect(JSON.stringify(shapes)).toMatchSnapshot(`${id} OpenAPI`);
    }
  });
});
