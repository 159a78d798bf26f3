import { AppException } from '../common/errors';
import { ToolError } from '../tools/sdk';
import { operationUrl } from './openapi-call';
import { dereferencedDocument, documentOfText, operationTools } from './openapi-document';
import { problemParameter } from './problem-parameter';
import type { HttpOperation } from './upstream.entity';

const showPet: HttpOperation = { method: 'GET', path: '/pets/{petId}', parameters: [{ name: 'petId', in: 'path' }, { name: 'fields', in: 'query' }, { name: 'X-Trace', in: 'header' }], body: false };
const createPet: HttpOperation = { method: 'POST', path: '/pets', parameters: [{ name: 'limit', in: 'query' }], body: true };

function thrown(work: () => unknown): ToolError | AppException | undefined {
  try {
    work();
  } catch (err) {
    return err as ToolError | AppException;
  }
  return undefined;
}

describe('an OpenAPI operation’s URL', () => {
  it('appends the path to the base path, each path parameter one encoded segment, the query after', () => {
    expect(operationUrl('http://127.0.0.1:9/api/v2/', showPet, { petId: 'a b/../c?d#e', fields: ['id', 'name'] }).toString()).toBe('http://127.0.0.1:9/api/v2/pets/a%20b%2F..%2Fc%3Fd%23e?fields=id&fields=name');
    expect(operationUrl('http://127.0.0.1:9', showPet, { petId: 7 }).toString()).toBe('http://127.0.0.1:9/pets/7');
  });

  it('refuses a path value that would be a dot segment or empty, naming the parameter', () => {
    for (const petId of ['..', '.', '']) {
      expect(thrown(() => operationUrl('http://127.0.0.1:9/api', showPet, { petId }))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'petId' } });
    }
  });
});

describe('which parameter an upstream’s 4xx blames', () => {
  it.each([
    ['RFC 9457 invalid-params', { type: 'about:blank', 'invalid-params': [{ name: 'fields', reason: 'unknown field' }] }, showPet, 'fields'],
    ['RFC 9457 errors[].pointer into the body', { errors: [{ detail: 'too short', pointer: '#/owner/name' }] }, createPet, 'body.owner.name'],
    ['Fastify message, querystring', { statusCode: 400, code: 'FST_ERR_VALIDATION', message: 'querystring/limit must be <= 100' }, createPet, 'limit'],
    ['Fastify message, missing body property', { statusCode: 400, message: "body must have required property 'name'" }, createPet, 'body.name'],
    ['Fastify validation list', { validationContext: 'headers', validation: [{ instancePath: '/x-trace' }] }, showPet, 'X-Trace'],
    ['FastAPI loc', { detail: [{ loc: ['query', 'fields'], msg: 'bad' }] }, showPet, 'fields'],
    ['errors[].field', { errors: [{ field: 'petId', message: 'not a pet' }] }, showPet, 'petId'],
  ])('%s', (_shape, problem, operation, parameter) => {
    expect(problemParameter(problem, operation)).toBe(parameter);
  });

  it('names nothing when the problem names nothing of ours', () => {
    expect(problemParameter({ name: 'ValidationError', message: 'bad' }, showPet)).toBeUndefined();
    expect(problemParameter({ errors: [{ field: 'nope' }] }, showPet)).toBeUndefined();
    expect(problemParameter('text', showPet)).toBeUndefined();
  });
});

describe('an OpenAPI document’s operations as tools', () => {
  const document = {
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    components: { schemas: { Pet: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } } },
    paths: {
      '/pets/{petId}': {
        parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }],
        get: { operationId: 'showPet', responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } } } },
        delete: { responses: { '204': { description: 'gone' } } },
      },
      '/pets': {
        get: { operationId: 'listPets', responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Pet' } } } } } } },
        post: { operationId: 'uploadPet', requestBody: { content: { 'image/png': {} } }, responses: { '201': { description: 'ok' } } },
      },
    },
  };

  it('takes path-level parameters, dereferences schemas, wraps a non-object answer, names an operation without operationId by method and path', async () => {
    const tools = operationTools(await dereferencedDocument(document), ['showPet', 'GET /pets', 'delete /pets/{petId}']);
    expect(tools.map((tool) => tool.name)).toEqual(['showPet', 'listPets', 'delete_pets_petId']);
    expect(tools[0]).toMatchObject({ inputSchema: { properties: { petId: { type: 'string' } }, required: ['petId'], additionalProperties: false }, outputSchema: { properties: { id: { type: 'integer' } } }, operation: { method: 'GET', path: '/pets/{petId}' } });
    expect(tools[1]).toMatchObject({ outputSchema: { type: 'object', properties: { body: { type: 'array', items: { required: ['id'] } } } }, operation: { wrapped: true } });
    expect(tools[2]).toMatchObject({ annotations: { readOnlyHint: false, idempotentHint: true }, operation: { method: 'DELETE', wrapped: true } });
    expect(tools[2].outputSchema).toBeUndefined();
  });

  it('names unknown operations and unsupported content types', async () => {
    const read = await dereferencedDocument(document);
    expect(thrown(() => operationTools(read, ['showPet', 'nope', 'PUT /pets']))).toMatchObject({ body: { details: { parameter: 'operations', unknown: ['nope', 'PUT /pets'] } } });
    expect(thrown(() => operationTools(read, ['uploadPet']))?.message).toContain('image/png');
  });

  it('refuses references outside the document, other versions, and a circular schema', async () => {
    await expect(dereferencedDocument({ ...document, components: { schemas: { Pet: { $ref: 'https://example.com/pet.json' } } } })).rejects.toThrow(/https:\/\/example.com\/pet.json/);
    await expect(dereferencedDocument({ swagger: '2.0', info: {}, paths: {} })).rejects.toThrow(/OpenAPI 3.0 or 3.1/);
    const circular = { ...document, components: { schemas: { Pet: { type: 'object', properties: { parent: { $ref: '#/components/schemas/Pet' } } } } } };
    await expect(dereferencedDocument(circular)).rejects.toMatchObject({ message: expect.stringContaining("circular"), body: { code: "INVALID_REQUEST", details: { parameter: "spec" } } });
  });

  it('reads YAML and bounds its aliases', async () => {
    expect(await documentOfText('openapi: 3.0.3\ninfo: { title: t, version: "1" }\npaths: {}\n', 'spec')).toMatchObject({ openapi: '3.0.3' });
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]', ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(',')}]`)].join('\n');
    await expect(documentOfText(bomb, 'spec')).rejects.toThrow(/YAML/);
  });
});
