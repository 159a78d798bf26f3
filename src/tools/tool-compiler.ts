import { Injectable } from '@nestjs/common';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { valueAt } from '../common/dotted-path';
import { MAX_OUTPUT_DEPTH, unstorableProblem } from '../common/json-limits';
import { inputErrorToException } from './input-errors';
import type { ToolSource } from './isolation/tool-source';
import type { ToolDefinition, ToolHandler } from './sdk';
import type { RegisteredTool, ResolvedDefinition } from './tool-catalogue';
import { definitionProblems, inputRules, inputSchema, outputSchema } from './tool-schema';
import { readToolSettings } from './tool-settings';
import { toolCompactView, toolDetailView, toolSummaryView } from './tool-views';

const DEFAULT_TIMEOUT_SECONDS = 30;
const DEFAULT_RATE_LIMIT = 60;
const DEFAULT_CACHE_TTL_SECONDS = 3600;

// strictRequired would refuse `required` in a rule's subschema (`anyOf: [{ required: ['phone'] }]`), which is valid 2020-12: definitionProblems checks those names instead.
const AJV_OPTIONS = { allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true, coerceTypes: false } as const;

/**
 * A 2020-12 validator. Ajv 8 resolves `$anchor` but its strict mode calls it unknown inside a
 * `$ref`'d schema, so it is declared; `x-mcp-header` is an annotation with nothing to check.
 */
function validator(options: ConstructorParameters<typeof Ajv2020>[0]): Ajv2020 {
  return addFormats(new Ajv2020(options)).addKeyword('$anchor').addKeyword('x-mcp-header');
}

export class ToolDefinitionError extends Error {
  override name = 'ToolDefinitionError';
}

/** What a compiled tool takes from where it runs. */
export interface CompileContext {
  /** The provider's class name, for messages. */
  className: string;
  /** The file an `isolated` tool's worker thread loads the class from; used when `isolate` is set. */
  source?: ToolSource;
  /** Run isolated tools in worker threads (ISOLATE_TOOLS): without it they run in the caller's thread. */
  isolate: boolean;
  /** Where the tool's settings are read from. */
  environment: NodeJS.ProcessEnv;
  /** The service's public URL: the tool's documentation link. */
  publicUrl: string;
}

/**
 * Turns a definition and its handler into a registered tool: checks the definition (stopping boot
 * with a ToolDefinitionError naming the problem), fills in defaults, compiles the published
 * schemas, runs every example through them, reads the declared settings and builds the views.
 * It depends on nothing but its arguments; its two validators only cache compiled schemas.
 */
@Injectable()
export class ToolCompiler {
  /** Inputs are normalised in place (defaults, unknown members dropped); outputs only checked. */
  private readonly inputAjv = validator({ ...AJV_OPTIONS, useDefaults: true, removeAdditional: true });
  private readonly outputAjv = validator(AJV_OPTIONS);

  compile(raw: ToolDefinition, handler: ToolHandler, context: CompileContext): RegisteredTool {
    const fail = (problem: string) => new ToolDefinitionError(`Invalid tool definition '${raw?.id}' (${context.className}): ${problem}`);
    if (typeof handler?.execute !== 'function') throw fail('the class must implement execute(input, ctx)');
    const problems = definitionProblems(raw);
    if (problems.length > 0) throw fail(problems.join('; '));

    const definition = resolved(raw);
    const inSchema = inputSchema(definition);
    const outSchema = outputSchema(definition);
    let validateIn: ValidateFunction;
    let validateOut: ValidateFunction;
    try {
      validateIn = this.inputAjv.compile(inSchema);
      validateOut = this.outputAjv.compile(outSchema);
    } catch (err) {
      throw fail(`schema does not compile: ${(err as Error).message}`);
    }

    const validateInput = (input: Record<string, unknown>) => {
      if (!validateIn(input)) throw inputErrorToException(validateIn.errors ?? [], input, definition.input.properties, inputRules(definition.input));
      return input;
    };
    const outputProblem = (result: unknown) => {
      const unstorable = unstorableProblem(result, MAX_OUTPUT_DEPTH);
      if (unstorable) return `result cannot be stored: ${unstorable}`;
      return validateOut(result) ? null : this.outputAjv.errorsText(validateOut.errors, { dataVar: 'result' });
    };

    for (const example of definition.examples) {
      const input = structuredClone(example.input);
      if (!validateIn(input)) throw fail(`example '${example.name}' input: ${this.inputAjv.errorsText(validateIn.errors)}`);
      const problem = outputProblem(example.output);
      if (problem) throw fail(`example '${example.name}' output: ${problem}`);
      const unknownPath = example.varies?.find((path) => !valueAt(example.output, path).found);
      if (unknownPath) throw fail(`example '${example.name}' varies: '${unknownPath}' is not in its output`);
    }

    let config: RegisteredTool['config'];
    try {
      config = readToolSettings(definition.id, definition.config, context.environment);
    } catch (err) {
      throw fail((err as Error).message);
    }
    return {
      definition,
      handler,
      ...(definition.isolated && context.isolate && { source: context.source }),
      inputSchema: inSchema,
      outputSchema: outSchema,
      config,
      secretSettings: Object.entries(definition.config).filter(([, setting]) => setting.secret).map(([name]) => name),
      summary: toolSummaryView(definition),
      compact: toolCompactView(definition),
      detail: toolDetailView(definition, `${context.publicUrl}/v1/tools/${definition.id}/docs`),
      validateInput,
      outputProblem,
    };
  }
}

/** The definition with every default filled in. */
function resolved(raw: ToolDefinition): ResolvedDefinition {
  const effects = raw.effects ?? (raw.cacheable ? 'read' : 'write');
  return {
    status: 'ready',
    timeout: DEFAULT_TIMEOUT_SECONDS,
    rate_limit: DEFAULT_RATE_LIMIT,
    cacheable: false,
    cache_ttl: DEFAULT_CACHE_TTL_SECONDS,
    effects,
    idempotent: effects === 'read',
    open_world: false,
    config: {},
    isolated: false,
    ...raw,
  };
}
