import type { SchemaBounds, ToolDefinition, ToolInputProperty, ToolInputSchema, ToolOutputProperty } from './sdk';
import { BOUND_KEYWORDS, MEMBER_TYPES, TASK_SUPPORT, TOOL_CATEGORIES, TOOL_EFFECTS, TOOL_STATUSES } from './sdk';

export type JsonSchema = Record<string, unknown>;

/** The dialect of every schema a tool publishes and is validated with: MCP's default (SEP-1613). */
export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** Keywords of an input member besides the bounds; the service's own annotations are not published. */
const INPUT_KEYWORDS = new Set<string>(['type', 'description', ...BOUND_KEYWORDS, 'enum', 'default', 'writeOnly', 'x-request-headers', 'x-mcp-header']);
const OUTPUT_KEYWORDS = new Set<string>(['type', 'description', ...BOUND_KEYWORDS, 'enum']);
/** Keywords of the input object itself besides its members: rules across them. */
const INPUT_OBJECT_KEYWORDS = new Set<string>(['type', 'properties', 'required', '$defs', 'allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependentRequired']);

function pickBounds(member: SchemaBounds): JsonSchema {
  return Object.fromEntries(BOUND_KEYWORDS.filter((k) => member[k] !== undefined).map((k) => [k, member[k]]));
}

/** The names `required` lists, in the order of the members (the published order, whatever order the list was written in). */
export function requiredMembers(schema: { properties: Readonly<Record<string, unknown>>; required?: readonly string[] }): string[] {
  const required = new Set(schema.required ?? []);
  return Object.keys(schema.properties).filter((name) => required.has(name));
}

/** The rules across inputs, as written after the members. */
export function inputRules(input: ToolInputSchema): JsonSchema {
  return Object.fromEntries(Object.entries(input).filter(([keyword]) => !['type', 'properties', 'required'].includes(keyword)));
}

/** JSON Schema of a tool's input object: what ajv validates, MCP publishes as inputSchema. */
export function inputSchema(definition: ToolDefinition): JsonSchema {
  const { input } = definition;
  const properties = Object.fromEntries(Object.entries(input.properties).map(([name, member]) => [name, inputPropertySchema(member)]));
  return { $schema: JSON_SCHEMA_DIALECT, type: 'object', properties, required: requiredMembers(input), additionalProperties: false, ...inputRules(input) };
}

function inputPropertySchema(member: ToolInputProperty): JsonSchema {
  return {
    ...(member.type !== undefined && { type: member.type }),
    description: member.description,
    ...pickBounds(member),
    ...(member.enum && { enum: [...member.enum] }),
    ...(member.default !== undefined && { default: member.default }),
    ...(member['x-mcp-header'] !== undefined && { 'x-mcp-header': member['x-mcp-header'] }),
  };
}

/** JSON Schema of a tool's result object. */
export function outputSchema(definition: ToolDefinition): JsonSchema {
  const { output } = definition;
  const properties = Object.fromEntries(Object.entries(output.properties).map(([name, member]) => [name, outputPropertySchema(member)]));
  return { $schema: JSON_SCHEMA_DIALECT, type: 'object', properties, required: requiredMembers(output), additionalProperties: false };
}

function outputPropertySchema(member: ToolOutputProperty): JsonSchema {
  return {
    ...(member.type !== undefined && { type: Array.isArray(member.type) ? [...member.type] : member.type }),
    description: member.description,
    ...(member.enum && { enum: [...member.enum] }),
    ...pickBounds(member),
  };
}

/** A member's type without `null`, and whether it allows null (any JSON value includes null). */
export function memberType(member: Pick<ToolOutputProperty, 'type'>): { type: string; nullable: boolean } {
  if (member.type === undefined) return { type: 'any', nullable: true };
  if (typeof member.type === 'string') return { type: member.type, nullable: false };
  return { type: member.type.find((type) => type !== 'null') ?? 'null', nullable: member.type.includes('null') };
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
  const input = objectSchemaOf(definition.input, 'input', INPUT_OBJECT_KEYWORDS, check);
  const output = objectSchemaOf(definition.output, 'output', new Set(['type', 'properties', 'required']), check);
  check(Object.keys(output.properties).length > 0, 'output must declare at least one member');
  check(definition.mcp?.name === undefined || MCP_NAME_PATTERN.test(definition.mcp.name), 'mcp.name must be 1 to 64 letters, digits, _, . or -');
  check(definition.mcp?.content === undefined || output.properties[definition.mcp.content]?.type === 'array', 'mcp.content must name an array output (contentBlocksOutput)');
  const required = new Set(input.required ?? []);
  for (const [name, member] of Object.entries(input.properties) as [string, ToolInputProperty][]) {
    const where = `input '${name}'`;
    memberProblems(member, where, INPUT_KEYWORDS, check);
    check(member.type !== 'string' || member.maxLength !== undefined || member.enum !== undefined, `${where}: a string input needs maxLength or enum`);
    check(member.type !== 'array' || member.maxItems !== undefined, `${where}: an array input needs maxItems`);
    check(!(required.has(name) && member.default !== undefined), `${where}: a required input cannot have a default`);
  }
  for (const [name, member] of Object.entries(output.properties) as [string, ToolOutputProperty][]) {
    memberProblems(member, `output '${name}'`, OUTPUT_KEYWORDS, check);
    check(!member.enum || !memberType(member).nullable || member.enum.includes(null), `output '${name}': the enum of a member that may be null must list null`);
  }
  const headers = Object.entries(input.properties).filter(([, member]) => member['x-mcp-header'] !== undefined);
  for (const [name, { type, 'x-mcp-header': header }] of headers) {
    check(typeof header === 'string' && HEADER_TOKEN.test(header), `input '${name}': x-mcp-header must be an HTTP token (letters, digits, ! # $ % & ' * + - . ^ _ \` | ~)`);
    check(type !== undefined && ['string', 'integer', 'boolean'].includes(type), `input '${name}': only a string, integer or boolean input can be an x-mcp-header`);
  }
  const headerNames = headers.map(([, member]) => String(member['x-mcp-header']).toLowerCase());
  check(new Set(headerNames).size === headerNames.length, 'x-mcp-header names must be unique (case-insensitively)');
  const { $defs: _defs, ...rules } = inputRules(input);
  for (const name of input.required ?? []) check(Object.hasOwn(input.properties, name), `input: '${name}' is required but is not an input`);
  for (const name of requiredNames(rules)) check(Object.hasOwn(input.properties, name), `input: '${name}' is required by a rule but is not an input`);
  for (const name of output.required ?? []) check(Object.hasOwn(output.properties, name), `output: '${name}' is required but is not a member`);
  return problems;
}

type Check = (ok: unknown, problem: string) => void;

/** The input or output object schema, or an empty one after noting why it is not one. */
function objectSchemaOf<S extends { properties: Readonly<Record<string, unknown>>; required?: readonly string[] }>(schema: S | undefined, where: string, keywords: ReadonlySet<string>, check: Check): S {
  const valid = typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'object' && typeof schema.properties === 'object' && schema.properties !== null;
  check(valid, `${where} must be an object schema: { type: 'object', properties: {...}, required: [...] }`);
  if (!valid) return { properties: {} } as S;
  check(schema.required === undefined || Array.isArray(schema.required), `${where}.required must be a list of member names`);
  for (const keyword of Object.keys(schema)) check(keywords.has(keyword), `${where}: unknown keyword '${keyword}'`);
  return schema;
}

/** Problems of one member: a known type, a description, and no keyword the service would not publish. */
function memberProblems(member: { type?: unknown; description?: unknown }, where: string, keywords: ReadonlySet<string>, check: Check): void {
  const types = member.type === undefined ? [] : [member.type].flat();
  check(types.every((type) => (MEMBER_TYPES as readonly unknown[]).includes(type) || type === 'null'), `${where}: type must be one of ${MEMBER_TYPES.join(', ')} (or a list of one of them and 'null'), or absent for any JSON value`);
  check(typeof member.description === 'string' && member.description.length > 0, `${where}: description is required`);
  for (const keyword of Object.keys(member)) check(keywords.has(keyword), `${where}: unknown keyword '${keyword}'`);
}

/** Every input name a `required` in these rules lists (not inside `properties` or `$defs`: those objects have members of their own). */
function requiredNames(schema: unknown): string[] {
  if (Array.isArray(schema)) return schema.flatMap(requiredNames);
  if (typeof schema !== 'object' || schema === null) return [];
  return Object.entries(schema).flatMap(([keyword, value]) => (keyword === 'required' && Array.isArray(value) ? value.map(String) : keyword === '$defs' || keyword === 'properties' ? [] : requiredNames(value)));
}
