import { AppException } from '../common/errors';
import { UPSTREAM_TOOL_NAME, type DiscoveredTool, type HttpOperation } from './upstream.entity';

/** At most this many operations are taken from one document. */
export const MAX_OPERATIONS = 200;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;
/** `application/json` and the `+json` media types (RFC 6839), parameters ignored. */
const JSON_MEDIA = /^application\/(?:[\w.-]+\+)?json(?:\s*;.*)?$/i;
/** Headers the caller may not set through a parameter: OpenAPI ignores these as parameters, and the call sets them. */
/** What a header name may be (RFC 9110 token). */
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/;
const RESERVED_HEADERS = new Set(['accept', 'content-type', 'authorization', 'host', 'content-length', 'cookie', 'connection', 'transfer-encoding']);

type Schema = Record<string, unknown>;
interface Parameter { name: string; in: string; required?: boolean; description?: string; schema?: Schema; content?: Record<string, { schema?: Schema }> }
interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; description?: string; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
type PathItem = Partial<Record<(typeof METHODS)[number], Operation>> & { parameters?: Parameter[] };
interface Document { openapi?: unknown; paths?: Record<string, PathItem> }

const refuse = (message: string, details: Record<string, unknown> = {}) => AppException.invalidRequest(message, { parameter: 'spec', ...details });

/** Every `$ref` that is not a pointer into the document itself (a URL or a file): those are refused, never fetched. */
function outsideRefs(value: unknown, found = new Set<string>(), seen = new Set<unknown>()): Set<string> {
  if (value === null || typeof value !== 'object' || seen.has(value) || found.size >= 5) return found;
  seen.add(value);
  for (const [key, member] of Object.entries(value)) {
    if (key === '$ref' && typeof member === 'string' && !member.startsWith('#')) found.add(member);
    else outsideRefs(member, found, seen);
  }
  return found;
}

/**
 * The document checked against the OpenAPI 3.0/3.1 schemas and dereferenced by
 * @readme/openapi-parser, with local `$ref`s only: a reference to another file or URL, or a
 * circular one (a schema cannot be stored or checked as a cycle), is a 400 naming it.
 */
export async function dereferencedDocument(raw: unknown): Promise<Document> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw refuse('spec must be an OpenAPI document (a JSON object, or YAML)');
  const version = (raw as Document).openapi;
  if (typeof version !== 'string' || !/^3\.[01]\.\d+$/.test(version)) throw refuse(`spec must be OpenAPI 3.0 or 3.1 (its "openapi" is ${JSON.stringify(version ?? null)})`);
  const remote = [...outsideRefs(raw)];
  if (remote.length > 0) throw refuse(`spec refers outside itself ($ref ${remote.map((ref) => `'${ref}'`).join(', ')}): only references within the document ("#/...") are followed`, { refs: remote });
  // Loaded on the first registration: a process that never registers an OpenAPI upstream loads no parser.
  const parser = await import('@readme/openapi-parser');
  const options = { resolve: { external: false, file: false }, dereference: { circular: false }, timeoutMs: 5_000 } as const;
  let checked: Awaited<ReturnType<typeof parser.validate>>;
  let dereferenced: unknown;
  try {
    checked = await parser.validate(structuredClone(raw) as never, options);
    dereferenced = checked.valid ? await parser.dereference(structuredClone(raw) as never, options) : null;
  } catch (err) {
    // The parser throws for what it will not read (a circular reference, a pointer to nowhere): the document's fault.
    throw refuse(`spec could not be read: ${(err as Error).message.slice(0, 300)}`);
  }
  if (!checked.valid) throw refuse(`spec is not a valid OpenAPI document: ${parser.compileErrors(checked).slice(0, 1_000)}`);
  // Through JSON: dereferencing shares objects between places, a stored copy must not.
  return JSON.parse(JSON.stringify(dereferenced)) as Document;
}

/** The JSON media type among a content map's, if any. */
function jsonContent(content: Record<string, { schema?: Schema }> | undefined): { schema?: Schema } | undefined {
  return Object.entries(content ?? {}).find(([media]) => JSON_MEDIA.test(media))?.[1];
}

/** A tool name from the operationId when MCP allows it, else from method and path (`get_pets_petId`). */
function toolNameOf(method: string, path: string, operation: Operation): string {
  if (operation.operationId && UPSTREAM_TOOL_NAME.test(operation.operationId)) return operation.operationId;
  return `${method}_${path.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '')}`.slice(0, 128);
}

/** `object` schemas are the result as they are; any other answer is wrapped as `{ body }` (results are objects). */
function isObjectSchema(schema: Schema): boolean {
  return schema.type === 'object' || (schema.type === undefined && typeof schema.properties === 'object');
}

/** One selected operation as a tool: its inputs (parameters, `body`), its 2xx answer's schema, where each input goes. */
function toolOf(method: string, path: string, pathItem: PathItem, operation: Operation): DiscoveredTool {
  const label = `${method.toUpperCase()} ${path}`;
  const byPlace = new Map<string, Parameter>();
  for (const parameter of [...(pathItem.parameters ?? []), ...(operation.parameters ?? [])]) byPlace.set(`${parameter.in}:${parameter.name}`, parameter);
  const parameters = [...byPlace.values()].filter((parameter) => !(parameter.in === 'header' && RESERVED_HEADERS.has(parameter.name.toLowerCase())));
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  for (const parameter of parameters) {
    if (parameter.in !== 'path' && parameter.in !== 'query' && parameter.in !== 'header') {
      throw refuse(`operation ${label}: parameter '${parameter.name}' is in ${parameter.in}, which is not supported (path, query and header are)`, { operation: label });
    }
    if (parameter.in === 'header' && !HEADER_NAME.test(parameter.name)) throw refuse(`operation ${label}: header parameter '${parameter.name}' is not a valid header name`, { operation: label });
    if (parameter.name === 'body' || properties[parameter.name]) {
      throw refuse(`operation ${label}: parameter name '${parameter.name}' is used twice (or is "body", which names the request body)`, { operation: label });
    }
    const schema = parameter.schema ?? jsonContent(parameter.content)?.schema ?? {};
    properties[parameter.name] = { ...schema, ...(parameter.description && schema.description === undefined && { description: parameter.description }) };
    if (parameter.required || parameter.in === 'path') required.push(parameter.name);
  }
  const requestBody = operation.requestBody;
  if (requestBody) {
    const json = jsonContent(requestBody.content);
    if (!json) throw refuse(`operation ${label}: request body content type ${Object.keys(requestBody.content ?? {}).join(', ') || '(none)'} is not supported (only JSON)`, { operation: label });
    properties.body = { ...(json.schema ?? {}), ...(requestBody.description && { description: requestBody.description }) };
    if (requestBody.required) required.push('body');
  }
  const answers = Object.entries(operation.responses ?? {}).filter(([status]) => /^2(\d\d|XX)$/i.test(status));
  const schemas: Schema[] = [];
  for (const [status, answer] of answers) {
    if (!answer.content || Object.keys(answer.content).length === 0) continue;
    const json = jsonContent(answer.content);
    if (!json) throw refuse(`operation ${label}: response ${status} content type ${Object.keys(answer.content).join(', ')} is not supported (only JSON)`, { operation: label });
    if (json.schema) schemas.push(json.schema);
  }
  const answerSchema = schemas.length === 1 ? schemas[0] : schemas.length > 1 ? { anyOf: schemas } : undefined;
  const wrapped = !answerSchema || !isObjectSchema(answerSchema);
  const http: HttpOperation = { method: method.toUpperCase(), path, parameters: parameters.map(({ name, in: place }) => ({ name, in: place as 'path' | 'query' | 'header' })), body: Boolean(requestBody), ...(wrapped && { wrapped }) };
  const readOnly = method === 'get' || method === 'head';
  return {
    name: toolNameOf(method, path, operation),
    ...(operation.summary && { title: operation.summary.slice(0, 200) }),
    description: (operation.description ?? operation.summary ?? `${label} of the OpenAPI upstream`).slice(0, 2_000),
    inputSchema: { type: 'object', properties, ...(required.length > 0 && { required }), additionalProperties: false },
    ...(answerSchema && { outputSchema: wrapped ? { type: 'object', properties: { body: answerSchema }, required: ['body'] } : answerSchema }),
    annotations: { readOnlyHint: readOnly, idempotentHint: readOnly || method === 'put' || method === 'delete', openWorldHint: true },
    operation: http,
  };
}

/**
 * The selected operations of a dereferenced document as tools. An operation is selected by its
 * operationId or as "METHOD /path"; selections the document does not have are all named in one 400.
 */
export function operationTools(document: Document, selection: string[]): DiscoveredTool[] {
  const found = new Map<string, { method: string; path: string; pathItem: PathItem; operation: Operation }>();
  for (const [path, pathItem] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = pathItem?.[method];
      if (!operation) continue;
      const entry = { method, path, pathItem, operation };
      found.set(`${method.toUpperCase()} ${path}`, entry);
      if (operation.operationId) found.set(operation.operationId, entry);
    }
  }
  const unknown = selection.filter((selected) => !found.has(normalised(selected)));
  if (unknown.length > 0) {
    throw AppException.invalidRequest(`spec has no operation ${unknown.map((name) => `'${name}'`).join(', ')} (name operations by operationId or as "METHOD /path")`, { parameter: 'operations', unknown });
  }
  const tools = new Map<string, DiscoveredTool>();
  for (const selected of new Set(selection.map(normalised))) {
    const { method, path, pathItem, operation } = found.get(selected)!;
    const tool = toolOf(method, path, pathItem, operation);
    const same = tools.get(tool.name);
    if (same && same.operation!.method === tool.operation!.method && same.operation!.path === tool.operation!.path) continue;
    if (same) throw AppException.invalidRequest(`operations ${selected} and ${same.operation!.method} ${same.operation!.path} would both be tool '${tool.name}'`, { parameter: 'operations' });
    tools.set(tool.name, tool);
  }
  return [...tools.values()];
}

/** "get /pets" and "GET /pets" select the same operation; an operationId is taken as written. */
function normalised(selected: string): string {
  const match = /^([A-Za-z]+)\s+(\/.*)$/.exec(selected.trim());
  return match ? `${match[1].toUpperCase()} ${match[2]}` : selected;
}

/** A fetched or inline document's text as an object: JSON, else YAML (aliases bounded, so a billion-laughs document stops early). */
export async function documentOfText(text: string, parameter: 'spec' | 'spec_url'): Promise<unknown> {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    const { parse: parseYaml } = await import('yaml');
    try {
      return parseYaml(text, { maxAliasCount: 100 }) as unknown;
    } catch (err) {
      throw AppException.invalidRequest(`${parameter === 'spec' ? 'spec' : 'The document at spec_url'} is neither JSON nor valid YAML: ${(err as Error).message.split('\n')[0]}`, { parameter });
    }
  }
}
