/** What a tool declares about itself: its definition (`defineTool`), and the types a handler reads from it. */
import { applyDecorators, Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { FromSchema } from 'json-schema-to-ts';

export const TOOL_CATEGORIES = ['security', 'analysis', 'automation', 'integration', 'monitoring'] as const;
export type ToolCategory = (typeof TOOL_CATEGORIES)[number];

/**
 * What a call does to the world besides computing its result: `read` changes nothing, `write`
 * creates or adds (a comment, a message, a build), `destructive` may overwrite or delete
 * (an apply, a deploy). MCP clients show it to users as tool annotations.
 */
export const TOOL_EFFECTS = ['read', 'write', 'destructive'] as const;
export type ToolEffects = (typeof TOOL_EFFECTS)[number];

/**
 * Whether a call may become a background task for an MCP client that supports tasks: `optional`
 * for tools that may run long (a build, an apply, a load test, a large scan), whose call then
 * answers at once with a task (an async execution) the client polls; `required` for a tool that
 * only runs in the background: a synchronous call of it (REST without `async`, MCP without the
 * tasks extension) is refused.
 */
export const TASK_SUPPORT = ['optional', 'required'] as const;
export type TaskSupport = (typeof TASK_SUPPORT)[number];

export const TOOL_STATUSES = ['ready', 'beta', 'deprecated'] as const;
export type ToolStatus = (typeof TOOL_STATUSES)[number];

/** The JSON types an input or output member may have (JSON Schema's `type`); no `type` accepts any JSON value. */
export const MEMBER_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array'] as const;
export type MemberType = (typeof MEMBER_TYPES)[number];

/** The keywords beside `type` and `description` a member may use, in the order the published schema lists them. */
export const BOUND_KEYWORDS = [
  'minLength', 'maxLength', 'pattern', 'format', 'minimum', 'maximum',
  'minItems', 'maxItems', 'maxProperties', 'items', 'properties', 'required', 'additionalProperties', '$ref',
] as const;

/** JSON Schema keywords a member may add to bound or shape its value. */
export interface SchemaBounds {
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly format?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly maxProperties?: number;
  /** JSON Schema of array items. */
  readonly items?: JsonSchemaObject;
  /** JSON Schema of object members, and which of them are always present. */
  readonly properties?: Readonly<Record<string, JsonSchemaObject>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | JsonSchemaObject;
  /** A definition of the input's `$defs` (`#/$defs/<name>`), for an object input shaped as it says. */
  readonly $ref?: string;
}

/** Any JSON Schema 2020-12 object (nested shapes: array items, object members, rules). */
export type JsonSchemaObject = { readonly [keyword: string]: unknown };

/**
 * One input of a tool: a JSON Schema 2020-12 property, with two annotations of its own
 * (`x-mcp-header`, `x-request-headers`) that the service acts on.
 */
export interface ToolInputProperty extends SchemaBounds {
  /** No `type`: any JSON value (e.g. the document json-transform evaluates). */
  readonly type?: MemberType;
  readonly description: string;
  readonly enum?: readonly (string | number)[];
  readonly default?: unknown;
  /** A credential (JSON Schema's "sent, never read back"): redacted from logs and from the stored execution input. */
  readonly writeOnly?: boolean;
  /**
   * A map of HTTP request headers: the values of credential headers in it (Authorization, Cookie,
   * X-Api-Key, …) are redacted like `writeOnly` inputs (`redactStoredInput`). Set by `requestHeadersInput`.
   */
  readonly 'x-request-headers'?: boolean;
  /**
   * MCP 2026-07-28 clients mirror this input into an `Mcp-Param-{name}` HTTP header (SEP-2243), so
   * gateways can route or police on it without reading bodies; the service checks the two agree.
   * A string, integer or boolean input; an RFC 9110 token.
   */
  readonly 'x-mcp-header'?: string;
}

/**
 * A tool's input object as JSON Schema 2020-12: its members (`properties`), the ones a call must
 * give (`required`), and rules across them (which go together, which exclude each other:
 * `dependentRequired`, `if`/`then`/`else`, `not`, `anyOf`, `oneOf`, `allOf`; `exactlyOneOf` and
 * `notBoth` write the common ones), with `$defs` a member's `$ref` names. Unknown members of a
 * call are dropped; members with a `default` reach the tool filled in.
 */
export interface ToolInputSchema extends InputRules {
  readonly type: 'object';
  readonly properties: Readonly<Record<string, ToolInputProperty>>;
  readonly required?: readonly string[];
}

export interface InputRules {
  readonly $defs?: Readonly<Record<string, JsonSchemaObject>>;
  readonly allOf?: readonly JsonSchemaObject[];
  readonly anyOf?: readonly JsonSchemaObject[];
  readonly oneOf?: readonly JsonSchemaObject[];
  readonly not?: JsonSchemaObject;
  readonly if?: JsonSchemaObject;
  readonly then?: JsonSchemaObject;
  readonly else?: JsonSchemaObject;
  readonly dependentRequired?: Readonly<Record<string, readonly string[]>>;
}

/** One member of a tool's result: a JSON Schema 2020-12 property; `type: ['string', 'null']` allows null. */
export interface ToolOutputProperty extends SchemaBounds {
  /** No `type`: any JSON value. */
  readonly type?: MemberType | 'null' | readonly [MemberType, 'null'];
  readonly description: string;
  /** The only values it takes (with `null` when the type allows it). */
  readonly enum?: readonly (string | number | null)[];
}

/** A tool's result object as JSON Schema 2020-12: its members, and those every result has (`required`). */
export interface ToolOutputSchema {
  readonly type: 'object';
  readonly properties: Readonly<Record<string, ToolOutputProperty>>;
  readonly required?: readonly string[];
}

export interface ToolExample {
  name: string;
  input: Record<string, unknown>;
  output: Record<string, unknown>;
  /**
   * Dotted paths of output members that differ run to run (latency, timestamps, ids): the
   * examples suite checks that they are present with the example's type, not their value.
   */
  varies?: readonly string[];
}

export interface ToolDefinition {
  /** kebab-case identifier used in paths. */
  id: string;
  name: string;
  category: ToolCategory;
  description: string;
  /** Honest maturity; `ready` when omitted. */
  status?: ToolStatus;
  /** Semver of the tool's behaviour; part of the cache key. */
  version: string;
  /** The input object's JSON Schema; handlers get its type (`ToolInput`). */
  input: ToolInputSchema;
  /** The result object's JSON Schema; handlers return its type (`ToolOutput`). */
  output: ToolOutputSchema;
  /** Calls per minute per API key for this tool. */
  rate_limit?: number;
  /** Default timeout in seconds (max 300). */
  timeout?: number;
  /** Read-only tools whose successful results may be cached. */
  cacheable?: boolean;
  /** `read` when cacheable, else `write` when omitted; a cacheable tool must be `read`. */
  effects?: ToolEffects;
  /** Calling again with the same input has no further effect; defaults to true for `read` tools. */
  idempotent?: boolean;
  /** Reaches systems outside the service (a forge, a cluster, the network); false when omitted. */
  open_world?: boolean;
  /** Seconds a cached result lives (default 3600). */
  cache_ttl?: number;
  /** At least one example that really runs and yields `output`. */
  examples: ToolExample[];
  /** Settings the tool reads from the environment, validated at boot (a bad value stops start-up naming it). */
  config?: Record<string, ToolSettingDefinition>;
  /** Run in the worker-thread pool: CPU-heavy or caller-supplied-expression tools. */
  isolated?: boolean;
  /** May run as a background task (see TASK_SUPPORT); never when omitted. */
  task_support?: TaskSupport;
  /** How the MCP door presents the tool, when not as its id and its output as JSON text. */
  mcp?: ToolMcpPresentation;
}

export interface ToolMcpPresentation {
  /** The name MCP clients call it by (letters, digits, `_`, `.`, `-`; at most 64); the id when omitted. */
  name?: string;
  /**
   * An output member holding MCP content blocks (declare it with `contentBlocksOutput`): a
   * tools/call answers with those blocks (text, images, audio, embedded resources) as its
   * `content`, instead of the output as JSON text. REST returns them as the data they are.
   */
  content?: string;
}

/** One environment setting of a tool; reaches `ctx.config` typed. */
export interface ToolSettingDefinition {
  type: 'string' | 'url' | 'integer' | 'boolean';
  description: string;
  default?: string | number | boolean;
  /** A credential: never logged; may be overridden per account by a secret of the same name. */
  secret?: boolean;
}

/** Metadata marker the registry discovers providers by. */
export const ToolMetadata = DiscoveryService.createDecorator<ToolDefinition>();

/**
 * A tool's definition, kept as written (a `const` type), so that `ToolInput`, `ToolOutput` and
 * `ToolContext` of it type the handler: the definition is the only place a tool states its shape.
 */
export function defineTool<const D extends ToolDefinition>(definition: D): D {
  return definition;
}

/** Declares a tool: an injectable provider that the registry finds at boot. */
export function Tool(definition: ToolDefinition): ClassDecorator {
  return applyDecorators(Injectable(), ToolMetadata(definition));
}

/** The input a tool's handler gets: defaults filled in, unknown members dropped (the published schema closes the object). */
export type ToolInput<D extends Pick<ToolDefinition, 'input'>> = FromSchema<Closed<D['input']>>;

/** The result a tool's handler returns: its members and no others (the published schema closes the object). */
export type ToolOutput<D extends Pick<ToolDefinition, 'output'>> = FromSchema<Closed<D['output']>>;

type Closed<S> = S & { readonly additionalProperties: false };

/** An output member of MCP content blocks: `{type:'text',text}`, `{type:'image'|'audio',data,mimeType}` (base64) or `{type:'resource',resource:{uri,mimeType?,text|blob}}`. */
export function contentBlocksOutput<const Description extends string>(description: Description) {
  const base64 = { type: 'string', contentEncoding: 'base64' } as const;
  return {
    type: 'array',
    description,
    items: {
      oneOf: [
        { type: 'object', properties: { type: { const: 'text' }, text: { type: 'string' } }, required: ['type', 'text'] },
        { type: 'object', properties: { type: { enum: ['image', 'audio'] }, data: base64, mimeType: { type: 'string' } }, required: ['type', 'data', 'mimeType'] },
        {
          type: 'object',
          properties: {
            type: { const: 'resource' },
            resource: {
              type: 'object',
              properties: { uri: { type: 'string' }, mimeType: { type: 'string' }, text: { type: 'string' }, blob: base64 },
              required: ['uri'],
            },
          },
          required: ['type', 'resource'],
        },
      ],
    },
  } as const satisfies ToolOutputProperty;
}

/** The input of extra HTTP request headers a tool sends upstream: at most 20, values bounded, never logged. */
export function requestHeadersInput<const Description extends string>(description: Description) {
  return { type: 'object', maxProperties: 20, additionalProperties: { type: 'string', maxLength: 4096 }, 'x-request-headers': true, description } as const satisfies ToolInputProperty;
}
