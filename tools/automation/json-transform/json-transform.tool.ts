import jsonata from 'jsonata';
import { LRUCache } from 'lru-cache';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { getHeapStatistics } from 'node:v8';
import { boundedRegexExec, Tool, ToolError, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';

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
 * jsonata's evaluation awaits only settled promises, so a runaway expression would starve
 * timers and I/O (and with them the abort of `ctx.signal`); the guard yields this often.
 */
const YIELD_EVERY_MS = 20;

/**
 * A step starts only while the evaluation has added at most this share of its thread's heap
 * (counted from where the heap stood when it began, garbage left by earlier calls aside). One step may allocate about
 * 1 GB at once (a string of 2^29 characters from `$pad`, an array doubled by `$append`), and V8
 * ends the whole process, not the thread, when one allocation overshoots the heap limit; the
 * rest of the heap (TOOL_THREAD_MAX_MEMORY_MB, 2048 by default) is that allocation's room.
 */
const HEAP_SHARE = 0.25;

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
  // Caller-supplied expressions: a catastrophic regular expression blocks its thread, never the service.
  isolated: true,
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

/** A compiled instance and the deadline of the evaluation it runs, which its regular expressions read. */
interface Compiled {
  expression: jsonata.Expression;
  timebox: Timebox;
}

interface Timebox {
  deadline: number;
  timeLimitMs: number;
  /** Heap in use when the evaluation began. */
  heapAtStart: number;
}

function compile(expression: string): Compiled {
  const timebox: Timebox = { deadline: 0, timeLimitMs: 0, heapAtStart: 0 };
  try {
    // Typed as a full RegExpConstructor; jsonata only constructs it, calls `exec` and moves `lastIndex`.
    const RegexEngine = boundedRegexEngine(timebox) as unknown as RegExpConstructor;
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

/**
 * jsonata's regular expressions (`/…/` literals, whatever function runs them, `$eval` included),
 * each match stopped at the evaluation's deadline: one match is one evaluation step, and a
 * catastrophic one would otherwise hold its thread until the caller's timeout terminates it.
 */
function boundedRegexEngine(timebox: Timebox) {
  return class BoundedRegExp {
    /** jsonata sets and reads it to walk through the matches. */
    lastIndex = 0;

    constructor(private readonly pattern: RegExp) {}

    exec(text: string): RegExpExecArray | null {
      const left = timebox.deadline - Date.now();
      if (left <= 0) throw ranTooLong(timebox.timeLimitMs);
      this.pattern.lastIndex = this.lastIndex;
      const match = boundedRegexExec(this.pattern, text, 'expression', Math.ceil(left));
      this.lastIndex = this.pattern.lastIndex;
      return match;
    }
  };
}

const tooExpensive = (reason: string) =>
  ToolError.invalidInput('expression', 'an expression that terminates within the limits', undefined, `JSONata evaluation stopped: ${reason}`);
const ranTooLong = (timeLimitMs: number) => tooExpensive(`it ran longer than ${timeLimitMs / 1000} s (infinite loop?)`);

/**
 * Installs the time, depth and cancellation checks that jsonata runs at every evaluation step,
 * the way jsonata's own test suite "timeboxes" expressions, and the deadline its regular
 * expressions stop at.
 */
function guard({ expression, timebox }: Compiled, signal: AbortSignal, timeLimitMs: number): void {
  Object.assign(timebox, { deadline: Date.now() + timeLimitMs, timeLimitMs, heapAtStart: getHeapStatistics().used_heap_size });
  let lastYield = Date.now();
  let depth = 0;

  // `assign` is typed for string names only; the hooks are symbols.
  expression.assign(EVALUATE_ENTRY as unknown as string, async () => {
    depth += 1;
    if (depth > MAX_DEPTH) {
      throw tooExpensive(`nesting deeper than ${MAX_DEPTH} evaluation steps (non-terminating recursion?)`);
    }
    const heap = getHeapStatistics();
    if (heap.used_heap_size - timebox.heapAtStart > heap.heap_size_limit * HEAP_SHARE) {
      throw tooExpensive(`it took more than ${Math.round((heap.heap_size_limit * HEAP_SHARE) / 2 ** 20)} MB of memory`);
    }
    const now = Date.now();
    if (now > timebox.deadline) throw ranTooLong(timeLimitMs);
    if (now - lastYield >= YIELD_EVERY_MS) {
      lastYield = now;
      await yieldToEventLoop();
    }
    signal.throwIfAborted();
  });
  expression.assign(EVALUATE_EXIT as unknown as string, () => {
    depth -= 1;
  });
}

/**
 * The result as plain JSON: jsonata returns `undefined` for no match (-> null), may return
 * functions (not JSON: dropped, or null at the top) and tags arrays with internal flags
 * (dropped by serializing).
 */
function toJson(value: unknown): unknown {
  const json = value === undefined ? undefined : JSON.stringify(value, withoutFunctions);
  if (json === undefined) return null;
  const bytes = Buffer.byteLength(json);
  if (bytes > MAX_RESULT_BYTES) {
    throw ToolError.invalidInput(
      'expression',
      `a result of at most ${MAX_RESULT_BYTES} bytes as JSON`,
      undefined,
      `The result is ${bytes} bytes as JSON, over the limit of ${MAX_RESULT_BYTES} bytes (1 MiB); select or aggregate less data`,
    );
  }
  return JSON.parse(json);
}

/** jsonata lambdas and built-in function references are objects (circular ones): drop them. */
function withoutFunctions(_key: string, value: unknown): unknown {
  const isFunction =
    typeof value === 'object' && value !== null && ('_jsonata_lambda' in value || '_jsonata_function' in value);
  return isFunction ? undefined : value;
}

function describeFailure(error: unknown): string {
  const failure = (error ?? {}) as JsonataFailure;
  const message = failure.message ?? String(error);
  const where = failure.position === undefined ? '' : ` at position ${failure.position}`;
  return failure.code === undefined ? message : `${message} (${failure.code}${where})`;
}
