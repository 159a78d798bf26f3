/** What a tool declares about itself: the `@Tool({...})` definition. */
import { applyDecorators, Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';

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

/** `any` accepts any JSON value (e.g. the document json-transform evaluates). */
export const INPUT_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'any'] as const;
export type InputType = (typeof INPUT_TYPES)[number];

/** JSON Schema keywords a definition may add to bound or shape a value. */
export interface SchemaBounds {
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  maxProperties?: number;
  /** JSON Schema of array items. */
  items?: Record<string, unknown>;
  /** JSON Schema of object members. */
  properties?: Record<string, unknown>;
  additionalProperties?: boolean | Record<string, unknown>;
  /** A definition of the tool's `input_rules.$defs` (`#/$defs/<name>`), for an object input shaped as it says. */
  $ref?: string;
}

/**
 * Rules across a tool's inputs, JSON Schema 2020-12 applied to the whole input object and
 * published with it: inputs that go together (`dependentRequired`, `if`/`then`/`else`),
 * alternatives (`anyOf`, `oneOf`, `allOf` of them), and `$defs` an input's `$ref` names.
 */
export interface InputRules {
  $defs?: Record<string, Record<string, unknown>>;
  allOf?: Record<string, unknown>[];
  anyOf?: Record<string, unknown>[];
  oneOf?: Record<string, unknown>[];
  not?: Record<string, unknown>;
  if?: Record<string, unknown>;
  then?: Record<string, unknown>;
  else?: Record<string, unknown>;
  dependentRequired?: Record<string, string[]>;
}

/** One tool input, as GET /v1/tools/{id} shows it, plus bounds. */
export interface ToolInputDefinition extends SchemaBounds {
  type: InputType;
  description: string;
  required?: boolean;
  enum?: readonly (string | number)[];
  default?: unknown;
  /** The value is a credential: redacted from logs and from the stored execution input. */
  secret?: boolean;
  /**
   * The value is a map of HTTP request headers: the values of credential headers in it
   * (Authorization, Cookie, X-Api-Key, …) are redacted like `secret` inputs (`redactStoredInput`).
   */
  headers?: boolean;
  /**
   * MCP 2026-07-28 clients mirror this input into an `Mcp-Param-{mcp_header}` HTTP header (SEP-2243,
   * published as `x-mcp-header`), so gateways can route or police on it without reading bodies;
   * the service checks the two agree. A string, integer or boolean input; an RFC 9110 token.
   */
  mcp_header?: string;
}

/** One tool output member. Every output is present in a result unless `optional`. */
export interface ToolOutputDefinition extends SchemaBounds {
  type: InputType | 'null';
  description: string;
  optional?: boolean;
  /** Allows `null` besides `type`. */
  nullable?: boolean;
  /** The only values it takes. */
  enum?: readonly (string | number)[];
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
  inputs: Record<string, ToolInputDefinition>;
  /** Rules across inputs (which go together, which exclude each other); each input alone is described in `inputs`. */
  input_rules?: InputRules;
  outputs: Record<string, ToolOutputDefinition>;
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

/** Declares a tool: an injectable provider that the registry finds at boot. */
export function Tool(definition: ToolDefinition): ClassDecorator {
  return applyDecorators(Injectable(), ToolMetadata(definition));
}

/** An output member of MCP content blocks: `{type:'text',text}`, `{type:'image'|'audio',data,mimeType}` (base64) or `{type:'resource',resource:{uri,mimeType?,text|blob}}`. */
export function contentBlocksOutput(description: string): ToolOutputDefinition {
  const base64 = { type: 'string', contentEncoding: 'base64' };
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
  };
}

/** The input of extra HTTP request headers a tool sends upstream: at most 20, values bounded, never logged. */
export function requestHeadersInput(description: string): ToolInputDefinition {
  return { type: 'object', maxProperties: 20, additionalProperties: { type: 'string', maxLength: 4096 }, headers: true, description };
}
