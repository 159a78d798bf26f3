/**
 * GitHub's published OpenAPI description of the operations the forge tools call (extracted by
 * extract.ts), compiled with ajv: the fake forge checks every answer it gives, and every query and
 * body it receives, against it. OpenAPI 3.0's `nullable` is ajv's own keyword; `example`,
 * `discriminator` and GitHub's `x-*` members are ignored (`strict: false`).
 */
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { ExtractedDescription, ExtractedOperation } from './extract';
import extracted from './github-operations.json';

const DOCUMENT_ID = 'https://api.github.com/openapi.json';

/** Statuses whose answer has no body in HTTP (RFC 9110): nothing to check but emptiness. */
const BODYLESS = new Set([204, 205, 304]);

export class GithubDescription {
  private static loaded: GithubDescription | undefined;
  private readonly ajv = new Ajv({ strict: false, allErrors: true, logger: false });
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly description = extracted as unknown as ExtractedDescription;

  /** Compiled once per process (a test run may start many forges). */
  static load(): GithubDescription {
    return (GithubDescription.loaded ??= new GithubDescription());
  }

  private constructor() {
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: DOCUMENT_ID, components: nullableEnums(this.description.components) });
  }

  get source(): string {
    return `${this.description.source} (${this.description.version})`;
  }

  get operationIds(): string[] {
    return Object.keys(this.description.operations);
  }

  operation(operationId: string): ExtractedOperation {
    const operation = this.description.operations[operationId];
    if (!operation) throw new Error(`operation ${operationId} is not in the extracted description`);
    return operation;
  }

  /**
   * What is wrong with an answer, or null. A status the operation does not describe must carry
   * GitHub's generic error body (`basic-error`), as every GitHub error answer does.
   */
  responseProblem(operationId: string, status: number, body: unknown): string | null {
    if (BODYLESS.has(status)) return body === undefined ? null : `${status} must have no body`;
    const described = this.operation(operationId).responses;
    const schema = Object.prototype.hasOwnProperty.call(described, String(status))
      ? described[String(status)]
      : status >= 400
        ? { $ref: '#/components/schemas/basic-error' }
        : undefined;
    if (schema === undefined) return `status ${status} is not described for ${operationId}`;
    if (schema === null) return body === undefined ? null : `status ${status} of ${operationId} has no JSON body in the description`;
    return this.problem(`${operationId} ${status}`, schema, body);
  }

  /** What is wrong with a request's query (every member described, each value of its schema's type) and body. */
  requestProblem(operationId: string, query: URLSearchParams, body: unknown): string | null {
    const operation = this.operation(operationId);
    for (const [name, value] of query) {
      const parameter = operation.parameters.find((p) => p.in === 'query' && p.name === name);
      if (!parameter) return `query parameter '${name}' is not described for ${operationId}`;
      const typed = parameter.schema.type === 'integer' || parameter.schema.type === 'number' ? Number(value) : parameter.schema.type === 'boolean' ? value === 'true' : value;
      const problem = this.problem(`${operationId} ?${name}`, parameter.schema, typed);
      if (problem) return problem;
    }
    if (operation.requestBody) return this.problem(`${operationId} request body`, operation.requestBody, body);
    return body === undefined ? null : `${operationId} takes no request body`;
  }

  private problem(key: string, schema: object, value: unknown): string | null {
    let validate = this.compiled.get(key);
    if (!validate) this.compiled.set(key, (validate = this.ajv.compile(anchored(schema))));
    if (validate(value)) return null;
    return `${key}: ${this.ajv.errorsText(validate.errors, { separator: '; ', dataVar: 'body' })}`;
  }
}

/**
 * OpenAPI 3.0 `nullable: true` beside an `enum` that does not list null: GitHub means "one of these
 * or null" (an unfinished check run's conclusion is null), but JSON Schema's enum would refuse
 * null. The enum gets null added, which is what `nullable` says.
 */
function nullableEnums<T>(node: T): T {
  if (Array.isArray(node)) return node.map(nullableEnums) as T;
  if (node === null || typeof node !== 'object') return node;
  const copy = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, nullableEnums(value)])) as Record<string, unknown>;
  if (copy.nullable === true && Array.isArray(copy.enum) && !copy.enum.includes(null)) copy.enum = [...copy.enum, null];
  return copy as T;
}

/** An operation's schema with its `#/components/...` references pointed at the loaded document. */
function anchored(schema: object): object {
  return nullableEnums(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${DOCUMENT_ID}#/components/`)) as object);
}
