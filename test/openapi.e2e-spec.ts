/** The OpenAPI document (docs/API.md#openapi-document-and-typed-clients): valid, complete against Fastify's route table, typed per tool, usable by a generated client. */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { RouteOptions } from 'fastify';
import { createApp } from '../src/app.setup';
import { loadConfig } from '../src/config/app-config';
import { AccountsService } from '../src/keys/accounts.service';
import { ApiKeysService } from '../src/keys/api-keys.service';
import { ToolRegistry } from '../src/tools/tool-registry';
import { DATABASE_MODES } from './support/databases';
import { TestToolsModule } from './support/test-tools.module';
import { importEsm } from './openapi/import-esm';
import { TypedClientProject } from './openapi/typed-client';

type Document = { openapi: string; paths: Record<string, Record<string, any>>; components: Record<string, Record<string, any>> };
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

describe('OpenAPI document', () => {
  let app: NestFastifyApplication;
  let baseUrl: string;
  let key: string;
  let cleanup: () => Promise<void>;
  const routes: Array<{ method: string; url: string }> = [];
  let document: Document;
  let etag: string;

  beforeAll(async () => {
    const database = await DATABASE_MODES.find((m) => m.name === 'pglite')!.prepare();
    cleanup = database.cleanup;
    app = await createApp({ config: loadConfig({ LOG_LEVEL: 'silent', ...database.env }), extensions: [TestToolsModule] });
    app.getHttpAdapter().getInstance().addHook('onRoute', (route: RouteOptions) => {
      for (const method of [route.method].flat()) routes.push({ method: method.toLowerCase(), url: route.url! });
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = await app.getUrl();
    const account = await app.get(AccountsService).create({ name: 'acme', tier: 'enterprise' });
    key = (await app.get(ApiKeysService).create(account.id, { name: 'client', type: 'service' })).secret;
    const response = await fetch(`${baseUrl}/v1/openapi.json`);
    expect(response.status).toBe(200);
    etag = response.headers.get('etag')!;
    document = (await response.json()) as Document;
  });
  afterAll(async () => {
    await app?.close();
    await cleanup?.();
  });

  it('is public, served as one snapshot with an ETag, and revalidates to 304', async () => {
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await fetch(`${baseUrl}/v1/openapi.json`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(document.openapi).toBe('3.1.0');
  });

  it('validates against the OpenAPI 3.1 schema', async () => {
    const { Validator } = await importEsm<typeof import('@seriousme/openapi-schema-validator')>('@seriousme/openapi-schema-validator');
    const result = await new Validator().validate(structuredClone(document) as Parameters<InstanceType<typeof Validator>['validate']>[0]);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it('describes every route Fastify registered', () => {
    const documented = new Set(Object.entries(document.paths).flatMap(([p, item]) => Object.keys(item).map((m) => `${m} ${p}`)));
    const registered = routes
      .filter(({ method }) => METHODS.includes(method))
      .map(({ method, url }) => `${method} ${url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
    expect(registered.length).toBeGreaterThan(15);
    expect(registered.filter((route) => !documented.has(route))).toEqual([]);
  });

  it('has the Bearer scheme, the error envelope per error status, and the rate-limit and security headers', () => {
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const list = document.paths['/v1/tools'].get;
    expect(list.security).toEqual([{ bearer: [] }]);
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['limit', 'offset', 'category', 'status', 'search', 'view']));
    expect(list.parameters.find((p: { name: string }) => p.name === 'view')).toMatchObject({ in: 'query', required: false, schema: { enum: ['full', 'compact'], default: 'full' } });
    for (const status of ['400', '401', '403', '404', '429', '500']) expect(list.responses[status]).toEqual({ $ref: `#/components/responses/Error${status}` });
    expect(document.components.responses.Error429.headers).toHaveProperty('Retry-After');
    expect(document.components.responses.Error401.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
    expect(Object.keys(list.responses['200'].headers)).toEqual(expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Strict-Transport-Security', 'X-Frame-Options']));
    expect(document.paths['/healthz'].get.security).toEqual([]);
    expect(document.paths['/healthz'].get.responses).not.toHaveProperty('401');
    expect(document.paths['/v1/keys'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/CreateKeyDto' });
    expect(document.components.schemas.CreateKeyDto.required).toEqual(['name', 'type']);
  });

  it('has one typed operation per registered tool, extension modules included', () => {
    const tools = app.get(ToolRegistry).all();
    expect(tools.map((t) => t.definition.id)).toContain('test-sleep');
    for (const tool of tools) {
      const operation = document.paths[`/v1/tools/${tool.definition.id}/invoke`]?.post;
      expect(operation).toBeDefined();
      const name = operation.operationId.replace(/^invoke/, '');
      expect(document.components.schemas[`${name}Input`]).toEqual(tool.inputSchema);
      expect(document.components.schemas[`${name}Output`]).toEqual(tool.outputSchema);
      expect(operation.requestBody.content['application/json'].schema.oneOf[0]).toEqual({ $ref: `#/components/schemas/${name}Input` });
      expect(document.components.schemas[`${name}Success`].properties.result).toEqual({ $ref: `#/components/schemas/${name}Output` });
      expect(operation.responses['202']).toBeDefined();
      expect(operation.responses['504']).toEqual({ $ref: '#/components/responses/InvokeError504' });
    }
  });

  describe('a client generated with openapi-typescript and called through openapi-fetch', () => {
    let project: TypedClientProject;
    beforeAll(async () => {
      project = await TypedClientProject.generate(`${baseUrl}/v1/openapi.json`);
    }, 60_000);
    afterAll(() => project?.remove());

    const client = (body: string) => `
      import createClient from 'openapi-fetch';
      import type { paths } from './api.js';
      const client = createClient<paths>({ baseUrl: process.env.BASE_URL, headers: { authorization: \`Bearer \${process.env.KEY}\` } });
      const { data, error } = await client.POST('/v1/tools/json-transform/invoke', { body: ${body} });
      if (error) throw new Error(JSON.stringify(error));
      if (data.status !== 'success') throw new Error(\`not run synchronously: \${data.status}\`);
      const total: number | undefined = typeof data.result.result === 'number' ? data.result.result : undefined;
      console.log(JSON.stringify({ status: data.status, total, execution_id: data.execution_id }));
    `;

    it('type-checks a json-transform call and rejects a wrongly typed one', async () => {
      expect(await project.typeErrors('client', client(`{ expression: '$sum(xs)', data: { xs: [1, 2, 3] } }`))).toEqual([]);
      const wrong = await project.typeErrors('wrong', client(`{ expression: 42, data: {} }`));
      expect(wrong.join('\n')).toMatch(/number/);
    }, 60_000);

    it('calls json-transform on the running service', async () => {
      const printed = await project.run('client', client(`{ expression: '$sum(xs)', data: { xs: [1, 2, 3] } }`), { BASE_URL: baseUrl, KEY: key });
      expect(JSON.parse(printed)).toMatchObject({ status: 'success', total: 6, execution_id: expect.stringMatching(/^exec_/) });
    }, 60_000);
  });
});
