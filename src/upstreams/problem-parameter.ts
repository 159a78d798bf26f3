import type { HttpOperation } from './upstream.entity';

type Place = 'path' | 'query' | 'header' | 'body' | undefined;

/** How the common validators name where a problem is: Fastify's `validationContext`, FastAPI's `loc[0]`. */
const PLACES: Record<string, Place> = { querystring: 'query', query: 'query', params: 'path', path: 'path', headers: 'header', header: 'header', body: 'body' };

/** A JSON pointer (`/a/b`, `#/a/b`) as its segments, unescaped (RFC 6901). */
function pointerSegments(pointer: string): string[] {
  return pointer.replace(/^#/, '').split('/').slice(1).map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Our input's name for what the upstream named: an operation parameter by its name, else a place in `body`. */
function inputName(operation: HttpOperation, place: Place, segments: string[]): string | undefined {
  const [first] = segments;
  if (first === undefined || first === '') return place === 'body' && operation.body ? 'body' : undefined;
  if (place !== 'body') {
    const parameter = operation.parameters.find(({ name, in: where }) => (place === undefined || where === place) && (place === 'header' ? name.toLowerCase() === first.toLowerCase() : name === first));
    if (parameter) return parameter.name;
    if (place !== undefined) return undefined;
  }
  return operation.body ? ['body', ...segments].join('.') : undefined;
}

/** The candidates one problem entry gives: (place, path) pairs in the shapes validators write. */
function candidates(entry: Record<string, unknown>, context: Place, topLevel: boolean): [Place, string[]][] {
  const found: [Place, string[]][] = [];
  // RFC 9457's example extension: `{ "pointer": "#/age" }` into the request body.
  if (typeof entry.pointer === 'string') found.push(['body', pointerSegments(entry.pointer)]);
  // Ajv (Fastify): instancePath within the validation context, or the missing property.
  if (typeof entry.instancePath === 'string') {
    const missing = (entry.params as { missingProperty?: unknown } | undefined)?.missingProperty;
    found.push([context, [...pointerSegments(entry.instancePath), ...(typeof missing === 'string' ? [missing] : [])]]);
  }
  // FastAPI/pydantic: `loc: ["query", "limit"]`.
  if (Array.isArray(entry.loc) && entry.loc.length > 0) {
    const [where, ...rest] = entry.loc.map(String);
    found.push(where in PLACES ? [PLACES[where], rest] : [undefined, [where, ...rest]]);
  }
  // RFC 7807's `invalid-params: [{ name }]` and the common `{ field | param | parameter | name }`.
  // (Not `name` at the top, where it names the error: `{ "name": "ValidationError" }`.)
  for (const key of topLevel ? ['field', 'param', 'parameter'] : ['name', 'field', 'param', 'parameter', 'property']) {
    if (typeof entry[key] === 'string') found.push([context, String(entry[key]).split('.')]);
  }
  return found;
}

/**
 * Which of our inputs an upstream's 4xx problem body blames, when it says: RFC 9457 problem
 * details (`invalid-params`, `errors[].pointer`), Fastify/Ajv (`validation`, `validationContext`),
 * FastAPI (`detail[].loc`) and the common `errors[].field` shapes (docs/upstreams.md#openapi-operations).
 */
export function problemParameter(problem: unknown, operation: HttpOperation): string | undefined {
  if (problem === null || typeof problem !== 'object' || Array.isArray(problem)) return undefined;
  const record = problem as Record<string, unknown>;
  const context = typeof record.validationContext === 'string' ? PLACES[record.validationContext] : undefined;
  const entries = [record['invalid-params'], record.errors, record.validation, record.detail].flatMap((list) => (Array.isArray(list) ? list : []));
  for (const entry of [...entries, record]) {
    if (entry === null || typeof entry !== 'object') continue;
    for (const [place, segments] of candidates(entry as Record<string, unknown>, context, entry === record)) {
      const name = inputName(operation, place, segments);
      if (name) return name;
    }
  }
  // Fastify's default answer has only the message: "querystring/limit must be <= 100", "body must have required property 'name'".
  const message = typeof record.message === 'string' ? /^(querystring|params|headers|body)(\/\S*)?\s(?:.*required property '([^']+)')?/.exec(record.message) : null;
  if (!message) return undefined;
  return inputName(operation, PLACES[message[1]], [...pointerSegments(message[2] ?? ''), ...(message[3] ? [message[3]] : [])]);
}
