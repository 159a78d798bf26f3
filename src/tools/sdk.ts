/**
 * The tool SDK: the only module a tool or an extension module imports.
 *
 * A tool is one class decorated with `@Tool({...})` that implements `ToolHandler`.
 * It never touches Nest internals, the database or the HTTP request: it gets its
 * validated `input` and a `ToolContext`, returns its output object or throws `ToolError`.
 */
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
}

/** One tool input, in the SPEC's input-definition form plus bounds. */
export interface ToolInputDefinition extends SchemaBounds {
  type: InputType;
  description: string;
  required?: boolean;
  enum?: readonly (string | number)[];
  default?: unknown;
  /** The value is a credential: redacted from logs and from the stored execution input. */
  secret?: boolean;
}

/** One tool output member. Every output is present in a result unless `optional`. */
export interface ToolOutputDefinition extends SchemaBounds {
  type: InputType | 'null';
  description: string;
  optional?: boolean;
  /** Allows `null` besides `type`. */
  nullable?: boolean;
}

export interface ToolExample {
  name: string;
  input: Record<string, unknown>;
  output: Record<string, unknown>;
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
  /**
   * Runs in a worker thread that is terminated when the call is cancelled or times out, so the
   * tool can never block the service: for CPU-heavy work and caller-supplied code. The class must
   * be loaded from a `*.tool.ts` file and take no constructor arguments.
   */
  isolated?: boolean;
  /** Environment variables this tool reads; they appear in `ctx.config`. */
  config?: readonly string[];
}

export interface ToolLogger {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  error(message: string, meta?: Record<string, unknown>): void;
}

export interface WorkspaceFile {
  /** Path relative to the workspace root, with `/` separators. */
  path: string;
  size: number;
}

export interface WorkspaceListOptions {
  /** Only these relative paths (inside the listed directory); each must exist. */
  files?: readonly string[];
  /** Stop with INVALID_INPUT when more files than this would be returned. */
  maxFiles?: number;
  /** Skip files larger than this many bytes. */
  maxFileBytes?: number;
}

/**
 * Sandboxed access to WORKSPACE_ROOT. Every path is relative to the root; `..`,
 * absolute paths and symlinks out of it are refused with a ToolError (INVALID_INPUT).
 */
export interface Workspace {
  readonly root: string;
  /** Absolute real path of a workspace-relative path, after the sandbox check. */
  resolve(relativePath: string, parameter?: string): Promise<string>;
  /** Reads a text file, refusing files larger than `maxBytes`. */
  readText(relativePath: string, maxBytes: number, parameter?: string): Promise<string>;
  /** Regular files under a directory (or the file itself), sorted, sandbox-checked. */
  listFiles(relativePath: string, options?: WorkspaceListOptions, parameter?: string): Promise<WorkspaceFile[]>;
}

export interface ToolContext {
  readonly executionId: string;
  /** Aborts on cancel and on timeout; long work must watch it. */
  readonly signal: AbortSignal;
  /** Reports progress, 0..100; persistence is throttled by the runner. */
  progress(percent: number, message?: string): void;
  readonly logger: ToolLogger;
  /** The environment variables the tool declared in `config`. */
  readonly config: Readonly<Record<string, string | undefined>>;
  readonly workspace: Workspace;
}

export interface ToolHandler<I = Record<string, any>, O = Record<string, unknown>> {
  execute(input: I, ctx: ToolContext): Promise<O>;
}

export type ToolErrorCode = 'TOOL_ERROR' | 'INVALID_INPUT';

export interface ToolErrorOptions {
  /** TOOL_ERROR (500) by default; INVALID_INPUT (400) when the input is at fault. */
  code?: ToolErrorCode;
  /** True when trying again may succeed (upstream 5xx, network). */
  retryable?: boolean;
  details?: Record<string, unknown>;
  suggestion?: string;
  cause?: unknown;
}

/** The error a tool throws to fail its execution with a message the client sees. */
export class ToolError extends Error {
  readonly code: ToolErrorCode;
  readonly retryable: boolean;
  readonly details?: Record<string, unknown>;
  readonly suggestion?: string;

  constructor(message: string, options: ToolErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'ToolError';
    this.code = options.code ?? 'TOOL_ERROR';
    this.retryable = options.retryable ?? false;
    this.details = options.details;
    this.suggestion = options.suggestion;
  }

  /** An INVALID_INPUT error in the shape DESIGN §5.2 gives: parameter, expected, received. */
  static invalidInput(parameter: string, expected: string, received?: unknown, message?: string): ToolError {
    return new ToolError(message ?? `Invalid value for parameter '${parameter}': expected ${expected}`, {
      code: 'INVALID_INPUT',
      details: { parameter, expected, ...(received === undefined ? {} : { received }) },
    });
  }
}

/** Metadata marker the registry discovers providers by. */
export const ToolMetadata = DiscoveryService.createDecorator<ToolDefinition>();

/** Declares a tool: an injectable provider that the registry finds at boot. */
export function Tool(definition: ToolDefinition): ClassDecorator {
  return applyDecorators(Injectable(), ToolMetadata(definition));
}
