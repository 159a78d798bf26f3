import jsonata from 'jsonata';
import { LRUCache } from 'lru-cache';
import { getHeapStatistics } from 'node:v8';
import { Tool, ToolError, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';
import { shareEventLoop } from './event-loop-slices';
import { linearRegexEngine } from './linear-regex';

/** Nested evaluation steps; a non-tail recursive function uses about 3 per call. */
const MAX_DEPTH = 1_000;
const MAX_RESULT_BYTES = 1024 * 1024;
/**
 * Idle compiled instances kept per expression text: requests resumed in the same event-loop turn
 * (a batch of Redis or database replies) evaluate side by side, each on its own instance.
 */
const IDLE_PER_TEXT = 32;
/** Heap all idle instances may hold; one takes about 17 KB plus 64 bytes per character of text (measured). */
const IDLE_BUDGET_BYTES = 32 * 1024 * 1024;
const instanceBytes = (text: string) => 17_000 + 64 * text.length;

/**
 * A step starts only while the evaluation has added at most this much to the service's heap
 * (counted from where the heap stood when it began). One step may allocate several times that at
 * once (`$append` doubling an array, `$pad` making a string of up to 2^29 characters), and V8 ends
 * the whole process when one allocation overshoots the heap limit: the budget stays far below it.
 */
const HEAP_BUDGET_BYTES = 256 * 2 ** 20;
/**
 * Nor while the service's heap, every request's share together, is past this share of its limit:
 * that is the service's state, not the expression's fault, so the call fails retryable.
 */
const HEAP_SHARE = 0.75;
/** Seconds a caller refused for the service's memory is told to wait before retrying. */
const HEAP_RETRY_AFTER_SECONDS = 1;
/**
 * Longest string a step may produce. `&` builds strings without copying (doubling a 1 MiB string
 * eight times costs nothing), but jsonata's character functions (`$length`, `$substring`, `$pad`)
 * spread their argument into an array of characters in one go, and V8 ends the process when that
 * array outgrows its largest size (a string of 2^28 characters does). At this length the spread
 * takes about 150 ms (measured: 8 Mi characters, 684 ms).
 */
const MAX_STRING_LENGTH = 2 ** 21;
/**
 * Longest sequence (array) a step may produce. A 1 MiB document holds fewer elements (each takes
 * at least two bytes, a digit and a comma), so only generated sequences reach it — `[1..10000000]`
 * is jsonata's own limit — and a built-in then walks the whole sequence in one call without a
 * turn for the event loop: `$string` of 10^7 numbers held it 2.1 s, of 2^19 about 0.12 s (measured).
 */
const MAX_SEQUENCE_LENGTH = 2 ** 19;
/** JSON.stringify of a result stops once it has seen this many characters: the result is refused anyway. */
const RESULT_SCAN_CHARS = 8 * MAX_RESULT_BYTES;

/** jsonata 2.x looks its evaluation hooks up under these symbols (plain names in 1.x). */
const EVALUATE_ENTRY = Symbol.for('jsonata.__evaluate_entry');
const EVALUATE_EXIT = Symbol.for('jsonata.__evaluate_exit');

type JsonTransformInput = ToolInput<typeof definition>;

type JsonTransformOutput = ToolOutput<typeof definition>;

/** The shape of the errors jsonata throws (plain objects, not Error instances). */
interface JsonataFailure {
  code?: string;
  message?: string;
  position?: number;
}

const orders = {
  orders: [
    { id: 'A-1', customer: 'ada', total: 120, status: 'paid' },
    { id: 'A-2', customer: 'bob', total: 80, status: 'refunded' },
    { id: 'A-3', customer: 'ada', total: 45, status: 'paid' },
  ],
};

const definition = defineTool({
  id: 'json-transform',
  name: 'JSON Transform',
  category: 'automation',
  description: 'Evaluates a JSONata expression over a JSON document, bounded in time, nesting depth and result size.',
  status: 'ready',
  version: '1.0.0',
  config: {
    JSON_TRANSFORM_TIME_LIMIT_SECONDS: { type: 'integer', default: 5, description: 'How long one evaluation may run before it is stopped as an endless loop.' },
  },
  cacheable: true,
  timeout: 10,
  rate_limit: 100,
  input: {
    type: 'object',
    properties: {
      expression: {
        type: 'string',
        minLength: 1,
        maxLength: 10_000,
        description: 'The JSONata expression to evaluate (https://docs.jsonata.org).',
      },
      data: {
        description: 'The JSON document the expression is evaluated against.',
      },
      bindings: {
        type: 'object',
        maxProperties: 50,
        description: 'Extra variables for the expression: a member `name` is available as `$name`.',
      },
    },
    required: ['expression', 'data'],
  },
  output: {
    type: 'object',
    properties: {
      result: {
        description: 'The value of the expression, or null when it matches nothing.',
      },
    },
    required: ['result'],
  },
  examples: [
    {
      name: 'Total of paid orders per customer',
      input: {
        expression: "orders[status = 'paid']{ customer: $sum(total) }",
        data: orders,
      },
      output: { result: { ada: 165 } },
    },
    {
      name: 'Filter with a bound variable',
      input: {
        expression: 'orders[total >= $min].id',
        data: orders,
        bindings: { min: 50 },
      },
      output: { result: ['A-1', 'A-2'] },
    },
    {
      name: 'No match yields null',
      input: { expression: 'orders[status = "cancelled"]', data: orders },
      output: { result: null },
    },
  ],
});

@Tool(definition)
export class JsonTransformTool implements ToolHandler<typeof definition> {
  private readonly compiled = new CompiledExpressions();

  async execute(input: JsonTransformInput, ctx: ToolContext<typeof definition>): Promise<JsonTransformOutput> {
    const compiled = this.compiled.take(input.expression);
    const { expression } = compiled;
    guard(compiled, ctx.signal, Number(ctx.config.JSON_TRANSFORM_TIME_LIMIT_SECONDS) * 1000);

    let value: unknown;
    try {
      value = await expression.evaluate(input.data, input.bindings);
    } catch (error) {
      ctx.signal.throwIfAborted();
      if (error instanceof ToolError) throw error;
      // Type errors, bad arguments, undefined functions: the expression is at fault.
      throw ToolError.invalidInput(
        'expression',
        'an expression that evaluates without error',
        undefined,
        `JSONata evaluation failed: ${describeFailure(error)}`,
      );
    } finally {
      this.compiled.giveBack(input.expression, compiled);
    }
    return { result: toJson(value) };
  }
}

/**
 * Compiled expressions, reused: jsonata builds its parser tables and a fresh environment on every
 * compile, which costs more than evaluating a small transform. An instance serves one evaluation
 * at a time, since the guard's hooks live in its environment; each evaluation gets its own frame
 * for bindings and variables, so nothing carries over from one to the next.
 */
class CompiledExpressions {
  private readonly idle = new LRUCache<string, Compiled[]>({
    maxSize: IDLE_BUDGET_BYTES,
    sizeCalculation: (instances, text) => instances.length * instanceBytes(text),
  });

  take(text: string): Compiled {
    // An entry emptied here keeps its last size until given back to: an upper bound.
    return this.idle.get(text)?.pop() ?? compile(text);
  }

  /** Once its evaluation has settled. */
  giveBack(text: string, compiled: Compiled): void {
    const instances = this.idle.get(text) ?? [];
    if (instances.length >= IDLE_PER_TEXT) return;
    instances.push(compiled);
    this.idle.set(text, instances); // recounts its size
  }
}

/** A compiled instance and the bounds of the evaluation it runs, which its regular expressions read. */
interface Compiled {
  expression: jsonata.Expression;
  timebox: Timebox;
}

interface Timebox {
  deadline: number;
  /** When the current evaluation step began: its regular expressions' budget counts from there. */
  stepStarted: number;
  /** Heap in use when the evaluation began. */
  heapAtStart: number;
}

function compile(expression: string): Compiled {
  const timebox: Timebox = { deadline: 0, stepStarted: 0, heapAtStart: 0 };
  try {
    // Typed as a full RegExpConstructor; jsonata only constructs it, calls `exec` and moves `lastIndex`.
    const RegexEngine = linearRegexEngine(timebox) as unknown as RegExpConstructor;
    return { expression: jsonata(expression, { RegexEngine }), timebox };
  } catch (error) {
    throw ToolError.invalidInput(
      'expression',
      'a valid JSONata expression',
      undefined,
      `Invalid JSONata expression: ${describeFailure(error)}`,
    );
  }
}

const tooExpensive = (reason: string) =>
  ToolError.invalidInput('expression', 'an expression that terminates within the limits', undefined, `JSONata evaluation stopped: ${reason}`);

/**
 * Installs the checks jsonata runs at every evaluation step, the way jsonata's own test suite
 * "timeboxes" expressions: depth, memory, the time limit and cancellation, and the event loop's
 * turn (the evaluation runs on it, between other requests, a slice at a time).
 */
function guard({ expression, timebox }: Compiled, signal: AbortSignal, timeLimitMs: number): void {
  const started = Date.now();
  Object.assign(timebox, { deadline: started + timeLimitMs, stepStarted: started, heapAtStart: getHeapStatistics().used_heap_size });
  let depth = 0;

  // `assign` is typed for string names only; the hooks are symbols.
  expression.assign(EVALUATE_ENTRY as unknown as string, async () => {
    depth += 1;
    if (depth > MAX_DEPTH) {
      throw tooExpensive(`nesting deeper than ${MAX_DEPTH} evaluation steps (non-terminating recursion?)`);
    }
    const heap = getHeapStatistics();
    if (heap.used_heap_size - timebox.heapAtStart > HEAP_BUDGET_BYTES) throw tooExpensive(`it took more than ${HEAP_BUDGET_BYTES / 2 ** 20} MB of memory`);
    if (heap.used_heap_size > heap.heap_size_limit * HEAP_SHARE) {
      throw new ToolError('The service is short of memory for a JSONata evaluation right now; retry shortly', { retryable: true, retryAfter: HEAP_RETRY_AFTER_SECONDS });
    }
    let now = Date.now();
    if (now > timebox.deadline) throw tooExpensive(`it ran longer than ${timeLimitMs / 1000} s (infinite loop?)`);
    const turn = shareEventLoop(now, started);
    if (turn) {
      await turn;
      now = Date.now();
    }
    signal.throwIfAborted();
    timebox.stepStarted = now;
  });
  expression.assign(EVALUATE_EXIT as unknown as string, (_expr: unknown, _input: unknown, _environment: unknown, result: unknown) => {
    depth -= 1;
    if (typeof result === 'string' && result.length > MAX_STRING_LENGTH) {
      throw tooExpensive(`it made a string of more than ${MAX_STRING_LENGTH} characters`);
    }
    if (Array.isArray(result) && result.length > MAX_SEQUENCE_LENGTH) {
      throw tooExpensive(`it made a sequence of more than ${MAX_SEQUENCE_LENGTH} items`);
    }
  });
}

/**
 * The result as plain JSON: jsonata returns `undefined` for no match (-> null), may return
 * functions (not JSON: dropped, or null at the top) and tags arrays with internal flags
 * (dropped by serializing). Serializing stops early on a result far over the limit, which would
 * otherwise hold the event loop for seconds (`[1..10000000]` is 79 MB of JSON).
 */
function toJson(value: unknown): unknown {
  let scanned = 0;
  const json = value === undefined ? undefined : JSON.stringify(value, (key: string, member: unknown) => {
    scanned += key.length + (typeof member === 'string' ? member.length : 4);
    if (scanned > RESULT_SCAN_CHARS) throw resultTooLarge(`more than ${RESULT_SCAN_CHARS}`);
    return isFunction(member) ? undefined : member;
  });
  if (json === undefined) return null;
  const bytes = Buffer.byteLength(json);
  if (bytes > MAX_RESULT_BYTES) throw resultTooLarge(String(bytes));
  return JSON.parse(json);
}

const resultTooLarge = (bytes: string) =>
  ToolError.invalidInput(
    'expression',
    `a result of at most ${MAX_RESULT_BYTES} bytes as JSON`,
    undefined,
    `The result is ${bytes} bytes as JSON, over the limit of ${MAX_RESULT_BYTES} bytes (1 MiB); select or aggregate less data`,
  );

/** jsonata lambdas and built-in function references are objects (circular ones): dropped from results. */
function isFunction(value: unknown): boolean {
  return typeof value === 'object' && value !== null && ('_jsonata_lambda' in value || '_jsonata_function' in value);
}

function describeFailure(error: unknown): string {
  const failure = (error ?? {}) as JsonataFailure;
  const message = failure.message ?? String(error);
  const where = failure.position === undefined ? '' : ` at position ${failure.position}`;
  return failure.code === undefined ? message : `${message} (${failure.code}${where})`;
}
