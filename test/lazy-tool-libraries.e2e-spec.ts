/**
 * Start-up and the catalogue (the listing, each tool's read with its schemas and examples, MCP
 * tools/list, the OpenAPI document) load none of the tools' implementation libraries: each loads
 * on its tool's first call (docs/writing-a-tool.md#implementation-libraries). Each library here is
 * replaced by a module that records and refuses its load, so an eager import fails this suite.
 */
import type { TestAccount, TestApp } from './support/app';

const IMPLEMENTATION_LIBRARIES = [
  'typescript',
  '@typescript-eslint/typescript-estree',
  'typescript-eslint',
  'eslint',
  'eslint/use-at-your-own-risk',
  '@microsoft/eslint-plugin-sdl',
  'eslint-plugin-security',
  '@jscpd/core',
  '@jscpd/tokenizer',
  'autocannon',
  '@cyclonedx/cyclonedx-library',
  'fast-xml-parser',
  'dockerode',
  'dockerfile-ast',
  '@cdktn/hcl2json',
  '@slack/webhook',
  '@slack/web-api',
  'nodemailer',
  'yaml',
  '@yarnpkg/parsers',
  '@kubernetes/client-node',
  '@octokit/rest',
  'isomorphic-git',
  // Not a tool's, but loaded the same way: on the first OpenAPI upstream registration (src/upstreams/openapi-document.ts).
  '@readme/openapi-parser',
];

const loaded = new Set<string>();
for (const name of IMPLEMENTATION_LIBRARIES) {
  jest.doMock(name, () => {
    loaded.add(name);
    throw new Error(`${name} was loaded before any tool ran`);
  });
}

describe('Start-up loads no tool implementation library', () => {
  let t: TestApp;
  let acme: TestAccount;
  let cleanup: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    // Imported only now, after the mocks: the app's modules load every tool's file.
    const { startTestApp } = await import('./support/app');
    const { DATABASE_MODES } = await import('./support/databases');
    const database = await DATABASE_MODES.find((mode) => mode.name === 'pglite')!.prepare();
    cleanup = database.cleanup;
    t = await startTestApp({ env: database.env });
    acme = await t.createAccount('acme');
  });

  afterAll(async () => {
    await t?.close();
    await cleanup?.();
  });

  it('serves the catalogue, every tool, MCP tools/list and the OpenAPI document without them', async () => {
    const list = await t.request({ method: 'GET', url: '/v1/tools?limit=100', key: acme.key });
    expect(list.statusCode).toBe(200);
    const ids = (list.json() as { tools: { id: string }[] }).tools.map((tool) => tool.id);
    expect(ids.length).toBeGreaterThan(20);
    for (const id of ids) expect((await t.request({ method: 'GET', url: `/v1/tools/${id}`, key: acme.key })).statusCode).toBe(200);
    const mcp = await t.request({
      method: 'POST',
      url: '/v1/mcp',
      key: acme.key,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expect(mcp.statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: '/v1/openapi.json' })).statusCode).toBe(200);
    expect([...loaded]).toEqual([]);
  });

  it('would notice one: a tool implementation module refuses to load here', () => {
    expect(() => jest.requireActual('../tools/security/sast-scan/scan')).toThrow('eslint was loaded before any tool ran');
  });
});
