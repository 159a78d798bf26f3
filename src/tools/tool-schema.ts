import type { SchemaBounds, ToolDefinition, ToolInputDefinition, ToolOutputDefinition } from './sdk';
import { INPUT_TYPES, TASK_SUPPORT, TOOL_CATEGORIES, TOOL_EFFECTS, TOOL_STATUSES } from './sdk';

export type JsonSchema = Record<string, unknown>;

const BOUND_KEYS: readonly (keyof SchemaBounds)[] = [
  'minLength', 'maxLength', 'pattern', 'format', 'minimum', 'maximum',
  'minItems', 'maxItems', 'maxProperties', 'items', 'properties', 'additionalProperties', '$ref',
];

/** The dialect of every schema a tool publishes and is validated with: MCP's default (SEP-1613). */
export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

function pickBounds(definition: SchemaBounds): JsonSchema {
  return Object.fromEntries(BOUND_KEYS.filter((k) => definition[k] !== undefined).map((k) => [k, definition[k]]));
}

function typeOf(type: string, nullable = false): JsonSchema {
  if (type === 'any') return {};
  return { type: nullable ? [type, 'null'] : type };
}

/** JSON Schema of a tool's input object: what ajv validates, MCP publishes as inputSchema. */
export function inputSchema(definition: ToolDefinition): JsonSchema {
  const properties = Object.fromEntries(
    Object.entries(definition.inputs).map(([name, input]) => [name, inputPropertySchema(input)]),
  );
  const required = Object.entries(definition.inputs).filter(([, input]) => input.required).map(([name]) => name);
  return { $schema: JSON_SCHEMA_DIALECT, type: 'object', properties, required, additionalProperties: false, ...definition.input_rules };
}

function inputPropertySchema(input: ToolInputDefinition): JsonSchema {
  return {
    ...typeOf(input.type),
    description: input.description,
    ...pickBounds(input),
    ...(input.enum && { enum: [...input.enum] }),
    ...(input.default !== undefined && { default: input.default }),
    ...(input.mcp_header !== undefined && { 'x-mcp-header': input.mcp_header }),
  };
}

/** JSON Schema of a tool's result object. */
export function outputSchema(definition: ToolDefinition): JsonSchema {
  const properties = Object.fromEntries(
    Object.entries(definition.outputs).map(([name, output]) => [name, outputPropertySchema(output)]),
  );
  const required = Object.entries(definition.outputs).filter(([, output]) => !output.optional).map(([name]) => name);
  return { $schema: JSON_SCHEMA_DIALECT, type: 'object', properties, required, additionalProperties: false };
}

function outputPropertySchema(output: ToolOutputDefinition): JsonSchema {
  return { ...typeOf(output.type, output.nullable), description: output.description, ...(output.enum && { enum: [...output.enum, ...(output.nullable ? [null] : [])] }), ...pickBounds(output) };
}

const ID_PATTERN = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
/** MCP's tool-name rule (2025-11-25: letters, digits, `_`, `-`, `.`; 1 to 64). */
const MCP_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
/** RFC 9110 §5.1 token. */
const HEADER_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const VERSION_PATTERN = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;

/**
 * Problems with a definition that the schema compiler would not catch: identity, limits,
 * and unbounded inputs (every input is bounded by its schema, so no call can exhaust the service). Empty = valid.
 */
export function definitionProblems(definition: ToolDefinition): string[] {
  const problems: string[] = [];
  const check = (ok: unknown, problem: string) => {
    if (!ok) problems.push(problem);
  };
  check(typeof definition.id === 'string' && ID_PATTERN.test(definition.id) && definition.id.length <= 64, `id must be kebab-case, at most 64 characters (got ${JSON.stringify(definition.id)})`);
  check(typeof definition.name === 'string' && definition.name.trim().length > 0, 'name is required');
  check(typeof definition.description === 'string' && definition.description.trim().length > 0, 'description is required');
  check(TOOL_CATEGORIES.includes(definition.category), `category must be one of ${TOOL_CATEGORIES.join(', ')}`);
  check(definition.status === undefined || TOOL_STATUSES.includes(definition.status), `status must be one of ${TOOL_STATUSES.join(', ')}`);
  check(typeof definition.version === 'string' && VERSION_PATTERN.test(definition.version), 'version must be semver (e.g. 1.0.0)');
  check(definition.timeout === undefined || (Number.isInteger(definition.timeout) && definition.timeout >= 1 && definition.timeout <= 300), 'timeout must be whole seconds, 1..300');
  check(definition.rate_limit === undefined || (Number.isInteger(definition.rate_limit) && definition.rate_limit >= 1), 'rate_limit must be a positive whole number of calls per minute');
  check(definition.cache_ttl === undefined || (Number.isInteger(definition.cache_ttl) && definition.cache_ttl >= 1), 'cache_ttl must be positive whole seconds');
  check(definition.effects === undefined || TOOL_EFFECTS.includes(definition.effects), `effects must be one of ${TOOL_EFFECTS.join(', ')}`);
  check(definition.task_support === undefined || TASK_SUPPORT.includes(definition.task_support), `task_support must be one of ${TASK_SUPPORT.join(', ')}`);
  check(!definition.cacheable || (definition.effects ?? 'read') === 'read', "a cacheable tool must have effects 'read': results of side effects are never cached");
  check(Array.isArray(definition.examples) && definition.examples.length > 0, 'at least one example is required');
  check(definition.outputs && Object.keys(definition.outputs).length > 0, 'outputs must declare at least one member');
  check(definition.mcp?.name === undefined || MCP_NAME_PATTERN.test(definition.mcp.name), 'mcp.name must be 1 to 64 letters, digits, _, . or -');
  check(definition.mcp?.content === undefined || definition.outputs?.[definition.mcp.content]?.type === 'array', 'mcp.content must name an array output (contentBlocksOutput)');
  for (const [name, input] of Object.entries(definition.inputs ?? {})) {
    const where = `input '${name}'`;
    check(INPUT_TYPES.includes(input.type), `${where}: type must be one of ${INPUT_TYPES.join(', ')}`);
    check(typeof input.description === 'string' && input.description.length > 0, `${where}: description is required`);
    check(input.type !== 'string' || input.maxLength !== undefined || input.enum !== undefined, `${where}: a string input needs maxLength or enum`);
    check(input.type !== 'array' || input.maxItems !== undefined, `${where}: an array input needs maxItems`);
    check(!(input.required && input.default !== undefined), `${where}: a required input cannot have a default`);
  }
  const headers = Object.entries(definition.inputs ?? {}).filter(([, input]) => input.mcp_header !== undefined);
  for (const [name, { type, mcp_header: header }] of headers) {
    check(typeof header === 'string' && HEADER_TOKEN.test(header), `input '${name}': mcp_header must be an HTTP token (letters, digits, ! # $ % & ' * + - . ^ _ \` | ~)`);
    check(['string', 'integer', 'boolean'].includes(type), `input '${name}': only a string, integer or boolean input can be an mcp_header`);
  }
  const headerNames = headers.map(([, { mcp_header: header }]) => String(header).toLowerCase());
  check(new Set(headerNames).size === headerNames.length, 'mcp_header names must be unique (case-insensitively)');
  const { $defs, ...rules } = definition.input_rules ?? {};
  for (const name of requiredNames(rules)) check(Object.hasOwn(definition.inputs ?? {}, name), `input_rules: '${name}' is required by a rule but is not an input`);
  return problems;
}

/** Every input name a `required` in these rules lists (not inside `properties` or `$defs`: those objects have members of their own). */
function requiredNames(schema: unknown): string[] {
  if (Array.isArray(schema)) return schema.flatMap(requiredNames);
  if (typeof schema !== 'object' || schema === null) return [];
  return Object.entries(schema).flatMap(([keyword, value]) => (keyword === 'required' && Array.isArray(value) ? value.map(String) : keyword === '$defs' || keyword === 'properties' ? [] : requiredNames(value)));
}
