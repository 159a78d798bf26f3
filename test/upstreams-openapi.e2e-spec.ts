/**
 * OpenAPI operations as tools (docs/upstreams.md#openapi-operations) on both engines, against a
 * REST API on 127.0.0.1 whose document @fastify/swagger generates from its routes
 * (test/support/openapi-pets.ts): registration from spec_url (JSON and YAML) and inline, the
 * operations' parameters and body reaching the API, results checked against the 2xx schema,
 * errors mapped to the envelope (4xx naming the parameter, 401, 429 with Retry-After, redirects
 * not followed), path parameters kept inside the base path, API-key auth from the account's
 * secrets, async and cancelled calls, another account, and egress refusals at the address check.
 */
import { randomBytes } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import { DataSource } from 'typeorm';
import { useTestApp, type TestAccount } from './support/app';
import { describeEachEngine } from './support/engines';
import { startPetsApi, type PetsApi } from './support/openapi-pets';
import { until } from './support/poll';

const ENV = { SECRETS_KEY: randomBytes(32).toString('base64'), EGRESS_ALLOW: '127.0.0.1' };
const OPERATIONS = ['listPets', 'showPetById', 'createPet', 'GET /busy', 'moved', 'slow'];

describeEachEngine('OpenAPI upstreams', (mode) => {
  const suite = useTestApp(mode, { env: ENV });
  let api: PetsApi;
  beforeAll(async () => {
    api = await startPetsApi();
  });
  afterAll(async () => {
    await api?.close();
  });

  let accounts = 0;
  const account = () => suite.t.createAccount(`oa-${++accounts}`);
  const register = (owner: TestAccount, body: object) =>
    suite.t.request({ method: 'POST', url: '/v1/upstreams', key: owner.key, payload: { type: 'openapi', base_url: `${api.origin}/api`, auth: { none: true }, ...body } });
  const registered = async (owner: TestAccount, body: object = {}) => {
    const res = await register(owner, { name: 'pets', spec_url: `${api.origin}/openapi.json`, operations: OPERATIONS, ...body });
    expect(res.statusCode).toBe(201);
    return res.json();
  };
  const invoke = (key: string, toolId: string, payload: object, query = '') => suite.t.request({ method: 'POST', url: `/v1/tools/${toolId}/invoke${query}`, key, payload });
  const mcp = (key: string, message: object) =>
    suite.t.request({ method: 'POST', url: '/v1/mcp', key, payload: { jsonrpc: '2.0', id: 1, ...message }, headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' } });
  const restIds = async (key: string) => (await suite.t.request({ method: 'GET', url: '/v1/tools?limit=100', key })).json().tools.map((tool: { id: string }) => tool.id) as string[];
  const execution = async (key: string, id: string) => (await suite.t.request({ method: 'GET', url: `/v1/executions/${id}`, key })).json();
  const lastSeen = () => api.seen[api.seen.length - 1];

  it('registers operations from the generated document as tools, with their parameters, body and 2xx schema, for the account alone', async () => {
    const owner = await account();
    const upstream = await registered(owner);
    expect(upstream).toMatchObject({ type: 'openapi', name: 'pets', base_url: `${api.origin}/api`, spec_url: `${api.origin}/openapi.json`, status: { tool_count: 6, last_error: null } });
    expect(upstream.tools).toEqual(expect.arrayContaining([expect.objectContaining({ id: 'pets.showPetById', operation: 'GET /pets/{petId}' }), expect.objectContaining({ id: 'pets.busy' })]));

    const detail = (await suite.t.request({ method: 'GET', url: '/v1/tools/pets.createPet', key: owner.key })).json();
    expect(detail).toMatchObject({
      kind: 'upstream',
      operation: 'POST /pets',
      input_schema: { properties: { 'x-request-id': { type: 'string' }, body: { properties: { name: { type: 'string' } }, required: ['name'] } }, required: ['body'] },
      // The document's $ref to the Pet schema, dereferenced.
      output_schema: { properties: { id: { type: 'integer' }, name: { type: 'string' } }, required: ['id', 'name'] },
    });
    const names = (await mcp(owner.key, { method: 'tools/list', params: {} })).json().result.tools.map((tool: { name: string }) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['pets.listPets', 'pets.createPet']));

    const stranger = await account();
    expect(await restIds(stranger.key)).not.toContain('pets.listPets');
    expect((await invoke(stranger.key, 'pets.listPets', {})).statusCode).toBe(404);
    expect((await suite.t.request({ method: 'GET', url: `/v1/upstreams/${upstream.id}`, key: stranger.key })).statusCode).toBe(404);
  });

  it('sends parameters and body to the API and answers its checked result, through REST and MCP', async () => {
    const owner = await account();
    await registered(owner);
    const created = await invoke(owner.key, 'pets.createPet', { body: { name: 'Tom', tag: 'cat' }, 'x-request-id': 'req-42' });
    expect(created.json()).toMatchObject({ status: 'success', result: { name: 'Tom', tag: 'cat', id: expect.any(Number) } });
    expect(lastSeen()).toMatchObject({ method: 'POST', url: '/api/pets', headers: { 'x-request-id': 'req-42', 'content-type': 'application/json' }, body: { name: 'Tom', tag: 'cat' } });

    const listed = await invoke(owner.key, 'pets.listPets', { limit: 1, tag: 'cat' });
    expect(listed.json()).toMatchObject({ status: 'success', result: { pets: [{ name: 'Tom', tag: 'cat' }] } });
    expect(lastSeen().url).toBe('/api/pets?limit=1&tag=cat');

    const shown = (await mcp(owner.key, { method: 'tools/call', params: { name: 'pets.showPetById', arguments: { petId: '1' } } })).json().result;
    expect(shown.isError).toBeFalsy();
    expect(shown.structuredContent).toMatchObject({ id: 1, name: 'Rex' });

    // Refused before the call by the operation's own schema: no request reaches the API.
    const before = api.seen.length;
    const refused = await invoke(owner.key, 'pets.listPets', { limit: 'many' });
    expect(refused.json().error).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'limit' } });
    expect((await invoke(owner.key, 'pets.createPet', { body: { tag: 'x' } })).json().error).toMatchObject({ details: { parameter: expect.stringContaining('name') } });
    expect(api.seen.length).toBe(before);
  });

  it('maps the API’s errors: 4xx naming the parameter, 429 retryable with Retry-After, a redirect not followed', async () => {
    const owner = await account();
    const upstream = await registered(owner);
    // Our copy of the schema is loosened, so the API's own validation answers (Fastify: "querystring/limit must be <= 100").
    await suite.t.app.get(DataSource).query(`UPDATE upstreams SET tools = jsonb_set(tools, '{0,inputSchema,properties,limit}', '{"type":"integer"}') WHERE id = $1`, [upstream.id]);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // the catalogue's one-second reuse
    const tooMany = (await invoke(owner.key, 'pets.listPets', { limit: 500 })).json();
    expect(tooMany).toMatchObject({ status: 'error', error: { code: 'INVALID_INPUT', details: { parameter: 'limit', upstream: { status: 400 } } } });

    const missing = (await invoke(owner.key, 'pets.showPetById', { petId: '999' })).json();
    expect(missing.error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('no pet 999') });

    const busy = await invoke(owner.key, 'pets.busy', {});
    expect(busy.json()).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', retryable: true, retry_after: 7 } });
    expect(busy.headers['retry-after']).toBe('7');

    const moved = (await invoke(owner.key, 'pets.moved', {})).json();
    expect(moved.error).toMatchObject({ code: 'TOOL_ERROR', retryable: false, message: expect.stringContaining('not followed') });
    expect(lastSeen().url).toBe('/api/moved');
  });

  it('keeps path parameters inside the base path: encoded as one segment, dot segments refused', async () => {
    const owner = await account();
    await registered(owner);
    const traversal = (await invoke(owner.key, 'pets.showPetById', { petId: '../../admin' })).json();
    expect(traversal.error).toMatchObject({ code: 'INVALID_INPUT' });
    expect(lastSeen().url).toBe('/api/pets/..%2F..%2Fadmin');
    const before = api.seen.length;
    for (const petId of ['..', '.', '']) {
      const refused = (await invoke(owner.key, 'pets.showPetById', { petId })).json();
      expect(refused.error).toMatchObject({ code: expect.stringMatching(/INVALID_(INPUT|REQUEST)/), details: { parameter: 'petId' } });
    }
    expect(api.seen.length).toBe(before);
    expect(api.seen.some(({ url }) => url.startsWith('/admin'))).toBe(false);
  });

  it('sends an API key from the account’s secrets, never shows it, and names a refused credential', async () => {
    const owner = await account();
    const body = { name: 'secure', spec: await (await fetch(`${api.origin}/openapi.yaml`)).text(), operations: ['secure'], auth: { api_key_header: 'X-Api-Key', api_key_secret_name: 'PETS_KEY' } };
    const upstream = (await register(owner, body)).json();
    expect(upstream).toMatchObject({ spec_url: null, auth: { api_key_header: 'X-Api-Key', api_key_secret_name: 'PETS_KEY' }, status: { tool_count: 1 } });
    expect((await invoke(owner.key, 'secure.secure', {})).json().error).toMatchObject({ message: expect.stringContaining('PETS_KEY') });

    await suite.t.request({ method: 'PUT', url: '/v1/secrets/PETS_KEY', key: owner.key, payload: { value: 'wrong-key' } });
    const denied = (await invoke(owner.key, 'secure.secure', {})).json();
    expect(denied.error).toMatchObject({ code: 'TOOL_ERROR', retryable: false, details: { reason: 'upstream_auth', upstream: { status: 401 } }, message: expect.stringContaining('bad or missing API key') });
    expect(JSON.stringify(denied)).not.toContain('wrong-key');

    await suite.t.request({ method: 'PUT', url: '/v1/secrets/PETS_KEY', key: owner.key, payload: { value: 'k-123' } });
    expect((await invoke(owner.key, 'secure.secure', {})).json()).toMatchObject({ status: 'success', result: { ok: true } });
    expect(lastSeen().headers['x-api-key']).toBe('k-123');
    expect(JSON.stringify((await suite.t.request({ method: 'GET', url: `/v1/upstreams/${upstream.id}`, key: owner.key })).json())).not.toContain('k-123');
  });

  it('runs a call async, and cancelling one hangs up on the API', async () => {
    const owner = await account();
    await registered(owner);
    const queued = (await invoke(owner.key, 'pets.listPets', { limit: 1 }, '?async=true')).json();
    const ended = await until('async call ends', async () => {
      const row = await execution(owner.key, queued.execution_id);
      return row.status === 'queued' || row.status === 'running' ? undefined : row;
    });
    expect(ended).toMatchObject({ status: 'success', tool_id: 'pets.listPets', result: { pets: [expect.objectContaining({ id: 1 })] } });

    const hungUp = api.hungUp.length;
    const slow = (await invoke(owner.key, 'pets.slow', {}, '?async=true')).json();
    await until('the slow call reaches the API', async () => (api.seen.some(({ url }) => url === '/api/slow') && (await execution(owner.key, slow.execution_id)).status === 'running' ? true : undefined));
    expect((await suite.t.request({ method: 'DELETE', url: `/v1/executions/${slow.execution_id}`, key: owner.key })).statusCode).toBeLessThan(300);
    await until('cancelled', async () => ((await execution(owner.key, slow.execution_id)).status === 'cancelled' ? true : undefined), 10_000);
    await until('the API sees the hang-up', async () => (api.hungUp.length > hungUp ? true : undefined), 10_000);
  });

  it('describes the registration shape in the service’s own OpenAPI document', async () => {
    const document = (await suite.t.request({ method: 'GET', url: '/v1/openapi.json' })).json();
    const shape = document.components.schemas.CreateUpstreamDto;
    expect(Object.keys(shape.properties)).toEqual(expect.arrayContaining(['type', 'spec_url', 'spec', 'base_url', 'operations', 'auth']));
    expect(shape.properties.type.enum).toEqual(['mcp', 'openapi']);
    expect(shape.required).toEqual(['name', 'auth']);
    expect(document.paths['/v1/upstreams'].post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/CreateUpstreamDto');
    expect(document.paths['/v1/upstreams'].post.responses['201'].content['application/json'].schema.$ref).toBe('#/components/schemas/Upstream');
    const answers = new Ajv2020({ strict: false }).addFormat('uri', true).addFormat('date-time', true).compile(document.components.schemas.Upstream);
    const upstream = await registered(await account());
    expect({ valid: answers(upstream), errors: answers.errors ?? null }).toEqual({ valid: true, errors: null });
  });

  it('refuses bad registrations by name: unknown operations, unsupported content types, outside $refs, refused addresses', async () => {
    const owner = await account();
    const document = (await (await fetch(`${api.origin}/openapi.json`)).json()) as Record<string, unknown>;
    const cases: [object, string, string][] = [
      [{ spec_url: `${api.origin}/openapi.json`, operations: ['listPets', 'nope', 'DELETE /pets'] }, 'operations', "'nope', 'DELETE /pets'"],
      [{ spec_url: `${api.origin}/openapi.json`, operations: ['submitForm'] }, 'spec', 'application/x-www-form-urlencoded'],
      [{ spec: { ...document, components: { schemas: { 'def-0': { $ref: 'http://127.0.0.2/pet.json' } } } }, operations: ['listPets'] }, 'spec', 'http://127.0.0.2/pet.json'],
      [{ spec: { openapi: '2.0' }, operations: ['listPets'] }, 'spec', 'OpenAPI 3.0 or 3.1'],
      [{ spec: 'a: [', operations: ['listPets'] }, 'spec', 'YAML'],
      [{ spec_url: `${api.origin}/openapi.json`, spec: document, operations: ['listPets'] }, 'spec', 'exactly one'],
      [{ spec_url: `${api.origin}/openapi.json`, operations: [] }, 'operations', 'operations'],
      [{ spec_url: `${api.origin}/api/moved`, operations: ['listPets'] }, 'spec_url', 'redirects are not followed'],
      [{ spec_url: `${api.origin}/openapi.json`, operations: ['listPets'], auth: { api_key_header: 'Authorization', api_key_secret_name: 'X' } }, 'auth', 'api_key_header'],
      // The egress policy at the address check: nothing is sent to 127.0.0.2.
      [{ spec_url: `${api.origin}/openapi.json`, operations: ['listPets'], base_url: 'http://127.0.0.2:9/api' }, 'base_url', 'refused address'],
      [{ spec_url: 'http://127.0.0.2:9/openapi.json', operations: ['listPets'] }, 'spec_url', 'refused address'],
    ];
    for (const [body, parameter, text] of cases) {
      const res = await register(owner, { name: 'bad', ...body });
      expect({ body, status: res.statusCode }).toEqual({ body, status: 400 });
      expect(res.json().error).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter }, message: expect.stringContaining(text) });
    }
    expect((await suite.t.request({ method: 'GET', url: '/v1/upstreams', key: owner.key })).json().upstreams).toEqual([]);
  });

  it('refuses a call at the egress address check when the base URL points at a refused address, and refreshes from spec_url', async () => {
    const owner = await account();
    const upstream = await registered(owner, { operations: ['listPets'] });
    const refreshed = (await suite.t.request({ method: 'POST', url: `/v1/upstreams/${upstream.id}/refresh`, key: owner.key })).json();
    expect(refreshed).toMatchObject({ status: { tool_count: 1, last_error: null } });

    // As a changed EGRESS_ALLOW would leave it: the call is refused before any connection.
    await suite.t.app.get(DataSource).query(`UPDATE upstreams SET url = $1 WHERE id = $2`, [`http://127.0.0.2:${new URL(api.origin).port}/api`, upstream.id]);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const atCall = (await invoke(owner.key, 'pets.listPets', {})).json();
    expect(atCall).toMatchObject({ status: 'error', error: { code: 'TOOL_ERROR', retryable: false, message: expect.stringContaining('egress policy refuses') } });
  });
});
