/**
 * Upstream tools as the account's own, kept current and shared by every API process
 * (docs/upstreams.md#staying-current), on both engines: a registration made through one process is
 * callable through another at once and heard by the account's MCP `subscriptions/listen` streams
 * on either; a changed OpenAPI document is picked up with no request (UPSTREAM_REFRESH_SECONDS)
 * and heard as `tools/list_changed`, an unchanged one is not; a workflow step calls an upstream
 * tool, checked at save time against its schema. The API is test/support/openapi-pets.ts; its
 * generated document is served from a loopback server so the test can change it.
 */
import { randomBytes } from 'node:crypto';
import { startTestApp, useTestApp, type TestApp } from './support/app';
import { describeEachEngine } from './support/engines';
import { listChanges, listen, type Listening } from './support/mcp-listen';
import { startPetsApi, type PetsApi } from './support/openapi-pets';
import { until } from './support/poll';
import { startRecordingServer, type RecordingServer } from './support/recording-server';

const ENV = { SECRETS_KEY: randomBytes(32).toString('base64'), EGRESS_ALLOW: '127.0.0.1', UPSTREAM_REFRESH_SECONDS: '1' };

describeEachEngine('Upstreams staying current', (mode) => {
  const suite = useTestApp(mode, { env: ENV });
  let pets: PetsApi;
  let documents: RecordingServer;
  /** The document the spec URL serves now. */
  let document: { paths: Record<string, Record<string, { parameters?: object[] }>> };
  let mcpUrl: string;
  /** Another API process on the same database and Redis when distributed, else the same one. */
  let other: TestApp;
  const open: Listening[] = [];

  beforeAll(async () => {
    pets = await startPetsApi();
    document = (await (await fetch(`${pets.origin}/openapi.json`)).json()) as typeof document;
    documents = await startRecordingServer(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(document) }));
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    mcpUrl = `${(await suite.t.app.getUrl()).replace('[::1]', '127.0.0.1')}/v1/mcp`;
    other = mode.name === 'distributed' ? await startTestApp({ env: suite.env }) : suite.t;
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });
  afterAll(async () => {
    if (other !== suite.t) await other?.close();
    await documents?.close();
    await pets?.close();
  });

  const register = async (key: string, name: string) => {
    const res = await other.request({ method: 'POST', url: '/v1/upstreams', key, payload: { type: 'openapi', name, spec_url: `${documents.url}/openapi.json`, base_url: `${pets.origin}/api`, operations: ['listPets'], auth: { none: true } } });
    expect(res.statusCode).toBe(201);
    return res.json();
  };
  const inputOf = async (key: string, toolId: string) => (await suite.t.request({ method: 'GET', url: `/v1/tools/${toolId}`, key })).json().input_schema?.properties;

  it('a registration through one process is callable through the other at once, and heard by listen streams on either', async () => {
    const owner = await suite.t.createAccount('fresh-one');
    const stranger = await suite.t.createAccount('fresh-stranger');
    const mine = await listen(mcpUrl, owner.key, { toolsListChanged: true }, open);
    const theirs = await listen(mcpUrl, stranger.key, { toolsListChanged: true }, open);
    const upstream = await register(owner.key, 'pets');
    const called = await suite.t.request({ method: 'POST', url: '/v1/tools/pets.listPets/invoke', key: owner.key, payload: { limit: 1 } });
    expect(called.json()).toMatchObject({ status: 'success', result: { pets: [{ id: 1, name: 'Rex' }] } });
    await until('the registration heard', async () => (listChanges(mine).length === 1 ? true : undefined), 10_000, 20);

    // Switching the tool off and deleting the upstream are changes too; another account hears none of them.
    expect((await other.request({ method: 'PATCH', url: `/v1/upstreams/${upstream.id}`, key: owner.key, payload: { tools_enabled: { listPets: false } } })).statusCode).toBe(200);
    await until('the switch heard', async () => (listChanges(mine).length === 2 ? true : undefined), 10_000, 20);
    expect((await other.request({ method: 'DELETE', url: `/v1/upstreams/${upstream.id}`, key: owner.key })).statusCode).toBe(204);
    await until('the removal heard', async () => (listChanges(mine).length === 3 ? true : undefined), 10_000, 20);
    expect(listChanges(theirs)).toHaveLength(0);
  });

  it('picks up a changed document with no request, tells listen streams, and is quiet while nothing changes', async () => {
    const owner = await suite.t.createAccount('fresh-two');
    await register(owner.key, 'pets');
    const stream = await listen(mcpUrl, owner.key, { toolsListChanged: true }, open);
    expect(Object.keys(await inputOf(owner.key, 'pets.listPets')).sort()).toEqual(['limit', 'tag']);
    // Nothing changed: refreshes come and go (one a second), and nobody is told.
    const fetched = documents.received.length;
    await until('two refreshes', async () => (documents.received.length >= fetched + 2 ? true : undefined), 15_000, 50);
    expect(listChanges(stream)).toHaveLength(0);

    const listPets = document.paths['/pets'].get;
    listPets.parameters = [...(listPets.parameters ?? []), { name: 'colour', in: 'query', required: false, schema: { type: 'string' } }];
    await until('the new parameter in the catalogue', async () => ((await inputOf(owner.key, 'pets.listPets')).colour ? true : undefined), 15_000, 100);
    await until('the change heard', async () => (listChanges(stream).length === 1 ? true : undefined), 10_000, 20);
  });

  it('runs an upstream tool as a workflow step, its literal inputs checked against its schema when saved', async () => {
    const owner = await suite.t.createAccount('fresh-three');
    await register(owner.key, 'pets');
    const step = (inputs: object) => ({ id: 'list', tool: 'pets.listPets', inputs });
    const refused = await other.request({ method: 'POST', url: '/v1/workflows', key: owner.key, payload: { name: 'bad', steps: [step({ size: 3 })] } });
    expect(refused.json().error.details.problems).toEqual([expect.objectContaining({ path: 'steps[0].inputs.size', step: 'list', message: expect.stringContaining("tool 'pets.listPets' has no input 'size'") })]);
    // Another account has no such tool.
    const stranger = await suite.t.createAccount('fresh-four');
    const unknown = await other.request({ method: 'POST', url: '/v1/workflows', key: stranger.key, payload: { name: 'theirs', steps: [step({ limit: 1 })] } });
    expect(unknown.json().error.details.problems).toEqual([{ path: 'steps[0].tool', step: 'list', message: "unknown tool 'pets.listPets'" }]);

    const saved = await other.request({
      method: 'POST',
      url: '/v1/workflows',
      key: owner.key,
      payload: { name: 'first-pet', inputs: { limit: { type: 'integer', required: true } }, steps: [step({ limit: '${{ inputs.limit }}' })], outputs: { name: '${{ steps.list.result.pets[0].name }}' } },
    });
    expect(saved.statusCode).toBe(201);
    const run = await suite.t.request({ method: 'POST', url: `/v1/workflows/${saved.json().id}/runs`, key: owner.key, payload: { inputs: { limit: 1 } } });
    expect(run.json()).toMatchObject({ status: 'success', result: { name: 'Rex' } });
  });
});
