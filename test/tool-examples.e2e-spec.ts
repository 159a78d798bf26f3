/**
 * Every example of every tool really runs, through both doors: REST (`POST /v1/tools/{id}/invoke`)
 * and MCP (`tools/call` from the official client, which checks `structuredContent` against the
 * tool's outputSchema). The examples run in the example world (test/support/example-world): its
 * servers answer the `*.example.test` hosts the examples name.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ToolExample } from '@tos/sdk';
import { ToolRegistry } from '../src/tools/tool-registry';
import { useTestApp } from './support/app';
import { DATABASE_MODES } from './support/databases';
import { comparable, exampleWorldEnv } from './support/examples';

describe('Tool examples', () => {
  const suite = useTestApp(DATABASE_MODES[0], { env: exampleWorldEnv() });
  let client: Client;
  let examples: { tool: string; example: ToolExample }[];

  beforeAll(async () => {
    examples = suite.t.app
      .get(ToolRegistry)
      .all()
      .flatMap((tool) => tool.definition.examples.map((example) => ({ tool: tool.definition.id, example })));
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `${await suite.t.app.getUrl()}/v1/mcp`.replace('[::1]', '127.0.0.1');
    client = new Client({ name: 'examples', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${suite.acme.key}`, 'cache-control': 'no-cache' } } }));
  });
  afterAll(() => client?.close());

  it('covers every registered tool', () => {
    const tools = new Set(examples.map(({ tool }) => tool));
    expect([...tools].sort()).toEqual(suite.t.app.get(ToolRegistry).all().map((tool) => tool.definition.id).sort());
  });

  it('runs each example through REST to its declared output', async () => {
    for (const { tool, example } of examples) {
      const res = await suite.t.request({ method: 'POST', url: `/v1/tools/${tool}/invoke`, key: suite.acme.key, headers: { 'cache-control': 'no-cache' }, payload: example.input });
      const body = res.json();
      expect({ tool, example: example.name, status: res.statusCode, error: body.error, result: comparable(body.result, example) }).toEqual({
        tool,
        example: example.name,
        status: 200,
        error: undefined,
        result: comparable(example.output, example),
      });
    }
  });

  it('runs each example through MCP to its declared output', async () => {
    for (const { tool, example } of examples) {
      const result = await client.callTool({ name: tool, arguments: example.input });
      expect({ tool, example: example.name, isError: result.isError ?? false, output: comparable(result.structuredContent, example) }).toEqual({
        tool,
        example: example.name,
        isError: false,
        output: comparable(example.output, example),
      });
    }
  });
});
