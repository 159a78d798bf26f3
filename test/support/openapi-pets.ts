/**
 * A small REST API on 127.0.0.1 whose OpenAPI 3 document is generated from its routes by
 * @fastify/swagger (a published library, not hand-written JSON): pets to list, read and create, a
 * route that answers 429 with Retry-After, one behind an API key, one that redirects, a slow one
 * that notes when its caller hangs up, and a form-only one (a content type upstreams refuse).
 * `seen` records the raw request lines, so a test can check what reached the API.
 */
import Fastify, { type FastifyInstance } from 'fastify';

export interface PetsApi {
  origin: string;
  seen: { method: string; url: string; headers: Record<string, unknown>; body: unknown }[];
  hungUp: string[];
  close(): Promise<void>;
}

const PET = {
  $id: 'Pet',
  type: 'object',
  properties: { id: { type: 'integer' }, name: { type: 'string' }, tag: { type: 'string' } },
  required: ['id', 'name'],
} as const;

export async function startPetsApi(): Promise<PetsApi> {
  const app: FastifyInstance = Fastify({ logger: false });
  const seen: PetsApi['seen'] = [];
  const hungUp: string[] = [];
  const pets = new Map<number, { id: number; name: string; tag?: string }>([[1, { id: 1, name: 'Rex', tag: 'dog' }]]);
  await app.register((await import('@fastify/swagger')).default, {
    openapi: { openapi: '3.0.3', info: { title: 'Pets', version: '1.0.0' }, servers: [{ url: '/api' }] },
  });
  app.addSchema(PET);
  app.addHook('onRequest', async (request) => {
    seen.push({ method: request.method, url: request.raw.url ?? '', headers: { ...request.headers }, body: undefined });
  });
  app.addHook('preHandler', async (request) => {
    seen[seen.length - 1].body = request.body;
  });

  app.get('/api/pets', {
    schema: {
      operationId: 'listPets',
      summary: 'List pets',
      querystring: { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 100 }, tag: { type: 'string' } } },
      response: { 200: { type: 'object', properties: { pets: { type: 'array', items: { $ref: 'Pet#' } } }, required: ['pets'] } },
    },
  }, async (request) => {
    const { limit = 20, tag } = request.query as { limit?: number; tag?: string };
    return { pets: [...pets.values()].filter((pet) => !tag || pet.tag === tag).slice(0, limit) };
  });

  app.get('/api/pets/:petId', {
    schema: {
      operationId: 'showPetById',
      params: { type: 'object', properties: { petId: { type: 'string' } }, required: ['petId'] },
      response: { 200: { $ref: 'Pet#' }, 404: { type: 'object', properties: { message: { type: 'string' } } } },
    },
  }, async (request, reply) => {
    const pet = pets.get(Number((request.params as { petId: string }).petId));
    return pet ?? reply.code(404).send({ message: `no pet ${(request.params as { petId: string }).petId}` });
  });

  app.post('/api/pets', {
    schema: {
      operationId: 'createPet',
      headers: { type: 'object', properties: { 'x-request-id': { type: 'string' } } },
      body: { type: 'object', properties: { name: { type: 'string', minLength: 1 }, tag: { type: 'string' } }, required: ['name'] },
      response: { 201: { $ref: 'Pet#' } },
    },
  }, async (request, reply) => {
    const { name, tag } = request.body as { name: string; tag?: string };
    const pet = { id: pets.size + 1, name, ...(tag && { tag }) };
    pets.set(pet.id, pet);
    return reply.code(201).send(pet);
  });

  app.get('/api/busy', { schema: { operationId: 'busy', response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } }, 429: { type: 'object', properties: { message: { type: 'string' } } } } } }, async (_request, reply) =>
    reply.code(429).header('retry-after', '7').send({ message: 'slow down' }));

  app.get('/api/secure', { schema: { operationId: 'secure', response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } }, 401: { type: 'object', properties: { title: { type: 'string' }, detail: { type: 'string' } } } } } }, async (request, reply) =>
    request.headers['x-api-key'] === 'k-123' ? { ok: true } : reply.code(401).send({ title: 'Unauthorized', detail: 'bad or missing API key' }));

  app.get('/api/moved', { schema: { operationId: 'moved', response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } } } }, async (_request, reply) =>
    reply.redirect('/api/pets', 302));

  app.get('/api/slow', { schema: { operationId: 'slow', response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } } } }, async (request) => {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 30_000);
      request.raw.on('close', () => {
        clearTimeout(timer);
        hungUp.push(request.raw.url ?? '');
        resolve();
      });
    });
    return { ok: true };
  });

  app.post('/api/forms', {
    schema: { operationId: 'submitForm', consumes: ['application/x-www-form-urlencoded'], body: { type: 'object', properties: { a: { type: 'string' } } } },
  }, async () => ({}));

  app.get('/admin', async () => ({ admin: true }));
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/openapi.yaml', { schema: { hide: true } }, async (_request, reply) => reply.type('application/yaml').send(app.swagger({ yaml: true })));

  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  return { origin: `http://127.0.0.1:${port}`, seen, hungUp, close: () => app.close() };
}
