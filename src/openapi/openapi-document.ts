import { INestApplication, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { JsonSnapshot, snapshotJson } from '../common/http-cache';
import { AppConfig } from '../config/app-config';
import { ToolCatalogue } from '../tools/tool-catalogue';
import { COMPONENT_SCHEMAS, ref, RESPONSE_HEADERS, RETRY_HEADERS, SchemaObject, SUCCESS_MEDIA, SUCCESS_SCHEMAS, WEBHOOK_OPERATIONS } from './api-schemas';
import { INVOKE_HEADER_PARAMETERS, INVOKE_QUERY_PARAMETERS, invokeBody, invokeSuccess, toolOperations } from './tool-operations';
import { RouteAccess, routeAccess } from './route-access';

type Operation = Record<string, any>;

const GENERIC_INVOKE = /\/tools\/\{tool_id\}\/invoke$/;
const BODY_METHODS = new Set(['post', 'put', 'patch']);
const ERROR_DESCRIPTIONS: Record<string, string> = {
  '400': 'INVALID_REQUEST (malformed request, bad parameter, unsupported API-Version) or INVALID_INPUT',
  '401': 'UNAUTHORIZED: missing, malformed, unknown, revoked or expired key',
  '403': 'FORBIDDEN: the key lacks a scope or the tool',
  '404': 'NOT_FOUND: no such tool, execution, key or route (also another account’s)',
  '409': 'CONFLICT',
  '410': 'INVALID_REQUEST: API-Version 0.9 passed its sunset',
  '413': 'INVALID_REQUEST: body over 1 MiB (after decompression); a workspace archive over WORKSPACE_MAX_BYTES or past the account’s workspace bytes quota',
  '415': 'INVALID_REQUEST: body not application/json',
  '429': 'RATE_LIMITED: a window or quota is exhausted',
  '500': 'INTERNAL_ERROR or TOOL_ERROR',
  '503': 'INTERNAL_ERROR: the database, Redis or the queue is unavailable; nothing was done (retryable, Retry-After)',
  '504': 'TOOL_TIMEOUT',
};
/** Invoke failures after the execution started carry `status` and `execution_id` too. */
const INVOCATION_FAILURES = ['400', '409', '500', '504'];

/**
 * The OpenAPI 3.1 document: the controllers as @nestjs/swagger sees them, completed with the
 * the error envelope, headers and security (docs/API.md#contract), and one typed operation per registered tool. Built
 * once at boot (tools are fixed after it) and served as a snapshot with its ETag.
 */
@Injectable()
export class OpenApiDocument implements OnApplicationBootstrap {
  private app?: INestApplication;
  private built?: JsonSnapshot;

  constructor(
    private readonly registry: ToolCatalogue,
    private readonly config: AppConfig,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  /** The generator reads the application's routes; configureApp hands it over before init. */
  attach(app: INestApplication): void {
    this.app = app;
  }

  onApplicationBootstrap(): void {
    if (this.app) this.built = snapshotJson(this.build(this.app));
  }

  get snapshot(): JsonSnapshot {
    if (!this.built) throw new Error('The OpenAPI document is built at bootstrap; attach() was not called');
    return this.built;
  }

  private build(app: INestApplication): OpenAPIObject {
    const options = new DocumentBuilder()
      .setOpenAPIVersion('3.1.0')
      .setTitle('Tool Orchestration Service')
      .setDescription('Developer-ops tools over REST (and MCP at /v1/mcp). Errors use one envelope, { error: { code, message, retryable, … } }; every response carries the rate-limit and security headers.')
      .setVersion('1.0')
      .addServer(this.config.publicUrl)
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'An API key: sk_user_…, sk_svc_… or sk_temp_…' }, 'bearer')
      .build();
    const document = SwaggerModule.createDocument(app, options, {
      operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}`,
    });
    const access = routeAccess(this.discovery, this.scanner, this.reflector);
    document.components = {
      ...document.components,
      schemas: { ...document.components?.schemas, ...COMPONENT_SCHEMAS } as any,
      responses: errorResponses() as any,
      headers: { ...RESPONSE_HEADERS, ...RETRY_HEADERS, ...OTHER_HEADERS },
    };
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item as Record<string, Operation>)) {
        const route = access.get(`${method.toUpperCase()} ${path}`) ?? { public: false, scopes: [] };
        // One handler on several paths gets `[n]` suffixes from the generator: not an identifier.
        operation.operationId = String(operation.operationId).replace(/\[(\d+)\]$/, (_m, n: string) => (n === '0' ? '' : `_alias${n}`));
        completeOperation(path, method, operation, route);
      }
    }
    const tools = toolOperations(this.registry.all());
    Object.assign(document.components.schemas!, tools.schemas);
    for (const [path, item] of Object.entries(tools.paths)) {
      completeOperation(path, 'post', item.post, { public: false, scopes: ['tools:invoke'] });
      document.paths[path] = item as any;
    }
    document.webhooks = WEBHOOK_OPERATIONS as OpenAPIObject['webhooks'];
    return document;
  }
}

const OTHER_HEADERS = {
  'WWW-Authenticate': { description: 'Bearer', schema: { type: 'string' } },
  Location: { description: 'The execution’s status URL.', schema: { type: 'string' } },
};

const headerRefs = (names: string[]) => Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
const COMMON_HEADERS = headerRefs(Object.keys(RESPONSE_HEADERS));

function errorResponses(): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, description] of Object.entries(ERROR_DESCRIPTIONS)) {
    const extra = status === '429' ? Object.keys(RETRY_HEADERS) : status === '401' ? ['WWW-Authenticate'] : [];
    const headers = { ...COMMON_HEADERS, ...headerRefs(extra) };
    responses[`Error${status}`] = { description, headers, content: { 'application/json': { schema: ref('ErrorEnvelope') } } };
    if (INVOCATION_FAILURES.includes(status)) {
      responses[`InvokeError${status}`] = { description, headers, content: { 'application/json': { schema: { oneOf: [ref('ErrorEnvelope'), ref('InvocationError')] } } } };
    }
  }
  return responses;
}

function completeOperation(path: string, method: string, operation: Operation, route: RouteAccess): void {
  const invoke = method === 'post' && (GENERIC_INVOKE.test(path) || operation.operationId?.startsWith('invoke'));
  if (invoke && GENERIC_INVOKE.test(path)) {
    operation.parameters = [...(operation.parameters ?? []), ...INVOKE_QUERY_PARAMETERS, ...INVOKE_HEADER_PARAMETERS];
    operation.requestBody = invokeBody({ type: 'object', additionalProperties: true });
    operation.responses = { '200': { description: 'The tool ran and succeeded.', content: { 'application/json': { schema: invokeSuccess({ type: 'object' }) } } } };
  }
  operation.security = route.public ? [] : [{ bearer: [] }];
  if (route.scopes.length) operation.description = `${operation.description ? `${operation.description}\n\n` : ''}Needs the scope${route.scopes.length > 1 ? 's' : ''} ${route.scopes.map((s) => `\`${s}\``).join(', ')}.`;

  const responses: Record<string, any> = operation.responses ?? {};
  for (const [status, response] of Object.entries(responses)) {
    if (!status.startsWith('2')) continue;
    const key = `${method.toUpperCase()} ${path}`;
    const schema: SchemaObject | undefined = SUCCESS_SCHEMAS[key];
    response.content ??= schema ? { 'application/json': { schema } } : SUCCESS_MEDIA[key];
    response.description ||= 'Success';
    response.headers = { ...COMMON_HEADERS, ...response.headers };
  }
  if (invoke) responses['202'] = { description: 'Queued (`async=true`): follow `status_url`.', headers: { ...COMMON_HEADERS, ...headerRefs(['Location']) }, content: { 'application/json': { schema: ref('InvocationQueued') } } };

  const errors = ['400', '404', '410', '429', '500', '503'];
  if (!route.public) errors.push('401');
  if (route.scopes.length) errors.push('403');
  if (BODY_METHODS.has(method)) errors.push('413', '415');
  if (invoke) errors.push('409', '504');
  for (const status of errors.sort()) {
    responses[status] ??= { $ref: `#/components/responses/${invoke && INVOCATION_FAILURES.includes(status) ? 'InvokeError' : 'Error'}${status}` };
  }
  operation.responses = responses;
}
