import { AppException } from '../common/errors';

/** A workflow's name: its tool id is `workflow.<name>`. */
export const WORKFLOW_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;
const STEP_ID = /^[a-z_][a-z0-9_]{0,62}$/i;
const INPUT_NAME = /^[a-z_][a-z0-9_]{0,62}$/i;
const INPUT_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array'] as const;

export const LIMITS = { steps: 50, concurrency: 16, forEachItems: 100, retryAttempts: 10, backoffSeconds: 300, stepTimeoutSeconds: 300, runTimeoutSeconds: 86_400 } as const;
export const DEFAULTS = { concurrency: 4, runTimeoutSeconds: 3_600, forEachItems: 20 } as const;

/** A workflow input: a tool input's JSON Schema subset, plus whether it must be given. */
export interface WorkflowInput {
  type: (typeof INPUT_TYPES)[number];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  required?: boolean;
}

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  /** Seconds before the second attempt; doubled before each later one. */
  backoff: number;
  /** Error codes worth another attempt; empty: any error marked retryable. */
  on: string[];
}

export interface WorkflowStep {
  id: string;
  tool: string;
  /** Each a literal, or an expression `${{ … }}` (JSONata over `inputs`, `steps`, `item`, `index`). */
  inputs: Record<string, unknown>;
  needs: string[];
  if?: string;
  retry?: RetryPolicy;
  /** Seconds a single attempt may run. */
  timeout?: number;
  continue_on_error: boolean;
  /** An expression giving a list: the step runs once per item (`item`, `index`), at most `max_items`. */
  for_each?: string;
  max_items?: number;
}

export interface WorkflowDocument {
  name: string;
  description?: string;
  publish: boolean;
  concurrency: number;
  /** Seconds the whole run may take. */
  timeout: number;
  inputs: Record<string, WorkflowInput>;
  steps: WorkflowStep[];
  outputs: Record<string, unknown>;
}

/** One thing wrong with a document, named by where it is (`steps[1].inputs.data`) and, within a step, by the step's id. */
export interface DocumentProblem {
  path: string;
  step?: string;
  message: string;
}

const EXPRESSION = /^\s*\$\{\{([\s\S]*)\}\}\s*$/;

/** The JSONata text of a `${{ … }}` value, or undefined for a literal. */
export function expressionOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return EXPRESSION.exec(value)?.[1].trim();
}

/** The source a client sent: a JSON object, or YAML text (a request body of type application/yaml, or a `document` string). */
export async function documentSource(body: unknown): Promise<Record<string, unknown>> {
  if (typeof body === 'string') return parseYamlDocument(body);
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const { document } = body as { document?: unknown };
    if (typeof document === 'string') return parseYamlDocument(document);
    if (document && typeof document === 'object' && !Array.isArray(document)) return document as Record<string, unknown>;
    return body as Record<string, unknown>;
  }
  throw AppException.invalidRequest('A workflow document is a JSON object or YAML text', { parameter: 'body' });
}

/** `yaml` loads on the first YAML document, not at start-up (test/lazy-tool-libraries.e2e-spec.ts: tools use it too). */
async function parseYamlDocument(text: string): Promise<Record<string, unknown>> {
  const { parse: parseYaml } = await import('yaml');
  let parsed: unknown;
  try {
    parsed = parseYaml(text, { maxAliasCount: 100 });
  } catch (error) {
    throw AppException.invalidRequest(`The workflow document is not valid YAML: ${(error as Error).message.split('\n')[0]}`, { parameter: 'document' });
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw AppException.invalidRequest('The workflow document must be a mapping (name, inputs, steps, outputs)', { parameter: 'document' });
  return parsed as Record<string, unknown>;
}

/**
 * The document's shape, with defaults filled in: every problem found, each naming its place.
 * What needs the catalogue or JSONata (tools, expressions, references) is checked after, by
 * `checkDocument` (workflow-checks.ts).
 */
export function readDocument(raw: Record<string, unknown>): { document?: WorkflowDocument; problems: DocumentProblem[] } {
  const problems: DocumentProblem[] = [];
  const problem = (path: string, message: string, step?: string) => problems.push({ path, message, ...(step !== undefined && { step }) });
  const known = new Set(['name', 'description', 'publish', 'concurrency', 'timeout', 'inputs', 'steps', 'outputs']);
  for (const key of Object.keys(raw)) if (!known.has(key)) problem(key, `unknown member '${key}' (expected ${[...known].join(', ')})`);

  const { name, description, publish = false, concurrency = DEFAULTS.concurrency, timeout = DEFAULTS.runTimeoutSeconds, inputs = {}, steps, outputs = {} } = raw;
  if (typeof name !== 'string' || !WORKFLOW_NAME.test(name)) problem('name', 'a name of 1..63 lowercase letters, digits and dashes is required');
  if (description !== undefined && typeof description !== 'string') problem('description', 'must be a string');
  if (typeof publish !== 'boolean') problem('publish', 'must be true or false');
  if (!isInteger(concurrency, 1, LIMITS.concurrency)) problem('concurrency', `must be an integer from 1 to ${LIMITS.concurrency}`);
  if (!isInteger(timeout, 1, LIMITS.runTimeoutSeconds)) problem('timeout', `must be an integer number of seconds from 1 to ${LIMITS.runTimeoutSeconds}`);
  const readInputs = readInputDeclarations(inputs, problem);
  if (!isRecord(outputs)) problem('outputs', 'must be a mapping of output names to values or expressions');
  const readSteps: WorkflowStep[] = [];
  if (!Array.isArray(steps) || steps.length === 0) problem('steps', 'at least one step is required');
  else if (steps.length > LIMITS.steps) problem('steps', `at most ${LIMITS.steps} steps`);
  else steps.forEach((step: unknown, index) => {
    const read = readStep(step, `steps[${index}]`, problem);
    if (read) readSteps.push(read);
  });
  const ids = new Set<string>();
  readSteps.forEach((step, index) => {
    if (ids.has(step.id)) problem(`steps[${index}].id`, `duplicate step id '${step.id}'`, step.id);
    ids.add(step.id);
  });
  if (problems.length > 0) return { problems };
  return {
    problems,
    document: {
      name: name as string,
      ...(description !== undefined && { description: description as string }),
      publish: publish as boolean,
      concurrency: concurrency as number,
      timeout: timeout as number,
      inputs: readInputs,
      steps: readSteps,
      outputs: outputs as Record<string, unknown>,
    },
  };
}

type Report = (path: string, message: string, step?: string) => void;

function readInputDeclarations(inputs: unknown, problem: Report): Record<string, WorkflowInput> {
  if (!isRecord(inputs)) {
    problem('inputs', 'must be a mapping of input names to { type, description?, default?, enum?, required? }');
    return {};
  }
  const read: Record<string, WorkflowInput> = {};
  for (const [name, declaration] of Object.entries(inputs)) {
    const path = `inputs.${name}`;
    if (!INPUT_NAME.test(name)) problem(path, 'an input name is letters, digits and underscores, starting with a letter or underscore');
    if (!isRecord(declaration)) {
      problem(path, 'must be { type, description?, default?, enum?, required? }');
      continue;
    }
    const { type, description, enum: choices, required } = declaration;
    for (const key of Object.keys(declaration)) if (!['type', 'description', 'default', 'enum', 'required'].includes(key)) problem(`${path}.${key}`, `unknown member '${key}'`);
    if (!INPUT_TYPES.includes(type as WorkflowInput['type'])) problem(`${path}.type`, `must be one of ${INPUT_TYPES.join(', ')}`);
    if (description !== undefined && typeof description !== 'string') problem(`${path}.description`, 'must be a string');
    if (choices !== undefined && (!Array.isArray(choices) || choices.length === 0)) problem(`${path}.enum`, 'must be a non-empty list');
    if (required !== undefined && typeof required !== 'boolean') problem(`${path}.required`, 'must be true or false');
    read[name] = declaration as unknown as WorkflowInput;
  }
  return read;
}

const STEP_MEMBERS = new Set(['id', 'tool', 'inputs', 'needs', 'if', 'retry', 'timeout', 'continue_on_error', 'for_each', 'max_items']);

function readStep(raw: unknown, path: string, problem: Report): WorkflowStep | undefined {
  if (!isRecord(raw)) {
    problem(path, 'a step is a mapping with at least id and tool');
    return undefined;
  }
  const { id, tool, inputs = {}, needs = [], if: condition, retry, timeout, continue_on_error = false, for_each, max_items } = raw;
  const step = typeof id === 'string' ? id : undefined;
  const at = (member: string, message: string) => problem(`${path}.${member}`, message, step);
  for (const key of Object.keys(raw)) if (!STEP_MEMBERS.has(key)) at(key, `unknown member '${key}' (expected ${[...STEP_MEMBERS].join(', ')})`);
  if (typeof id !== 'string' || !STEP_ID.test(id)) at('id', 'a step id is letters, digits and underscores (it is read in expressions as steps.<id>)');
  if (typeof tool !== 'string' || tool.length === 0) at('tool', 'the id of the tool the step calls is required');
  if (!isRecord(inputs)) at('inputs', "must be a mapping of the tool's input names to values or expressions");
  if (!Array.isArray(needs) || !needs.every((need) => typeof need === 'string')) at('needs', 'must be a list of step ids');
  if (condition !== undefined && typeof condition !== 'string') at('if', 'must be an expression (a string)');
  if (for_each !== undefined && typeof for_each !== 'string') at('for_each', 'must be an expression giving a list');
  if (max_items !== undefined && !isInteger(max_items, 1, LIMITS.forEachItems)) at('max_items', `must be an integer from 1 to ${LIMITS.forEachItems}`);
  if (timeout !== undefined && !isInteger(timeout, 1, LIMITS.stepTimeoutSeconds)) at('timeout', `must be an integer number of seconds from 1 to ${LIMITS.stepTimeoutSeconds}`);
  if (typeof continue_on_error !== 'boolean') at('continue_on_error', 'must be true or false');
  const readRetry = retry === undefined ? undefined : readRetryPolicy(retry, (member, message) => at(`retry${member}`, message));
  return {
    id: id as string,
    tool: tool as string,
    inputs: inputs as Record<string, unknown>,
    needs: needs as string[],
    continue_on_error: continue_on_error as boolean,
    ...(condition !== undefined && { if: stripExpression(condition as string) }),
    ...(readRetry && { retry: readRetry }),
    ...(timeout !== undefined && { timeout: timeout as number }),
    ...(for_each !== undefined && { for_each: stripExpression(for_each as string) }),
    ...(max_items !== undefined && { max_items: max_items as number }),
  };
}

function readRetryPolicy(raw: unknown, at: (member: string, message: string) => void): RetryPolicy | undefined {
  if (!isRecord(raw)) {
    at('', 'must be { attempts, backoff?, on? }');
    return undefined;
  }
  const { attempts, backoff = 1, on = [] } = raw;
  for (const key of Object.keys(raw)) if (!['attempts', 'backoff', 'on'].includes(key)) at(`.${key}`, `unknown member '${key}'`);
  if (!isInteger(attempts, 1, LIMITS.retryAttempts)) at('.attempts', `must be an integer from 1 to ${LIMITS.retryAttempts} (attempts in all)`);
  if (typeof backoff !== 'number' || backoff < 0 || backoff > LIMITS.backoffSeconds) at('.backoff', `must be seconds from 0 to ${LIMITS.backoffSeconds}`);
  if (!Array.isArray(on) || !on.every((code) => typeof code === 'string' && /^[A-Z_]{1,40}$/.test(code))) at('.on', 'must be a list of error codes (e.g. TOOL_TIMEOUT)');
  return { attempts: attempts as number, backoff: backoff as number, on: on as string[] };
}

/** `if` and `for_each` are expressions whether or not they are written `${{ … }}`. */
function stripExpression(text: string): string {
  return expressionOf(text) ?? text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isInteger(value: unknown, min: number, max: number): boolean {
  return Number.isInteger(value) && (value as number) >= min && (value as number) <= max;
}

/** The JSON Schema of a workflow's inputs: its tool input schema when published, and what a run's inputs are validated against. */
export function inputsSchema(document: Pick<WorkflowDocument, 'inputs'>): Record<string, unknown> {
  const properties = Object.fromEntries(
    Object.entries(document.inputs).map(([name, { type, description, default: fallback, enum: choices }]) => [
      name,
      { type, ...(description !== undefined && { description }), ...(fallback !== undefined && { default: fallback }), ...(choices !== undefined && { enum: choices }) },
    ]),
  );
  const required = Object.entries(document.inputs)
    .filter(([, input]) => input.required === true && input.default === undefined)
    .map(([name]) => name);
  return { type: 'object', properties, ...(required.length > 0 && { required }), additionalProperties: false };
}
