import jsonata from 'jsonata';
import { LRUCache } from 'lru-cache';
import { getHeapStatistics } from 'node:v8';
import { shareEventLoop } from './event-loop-slices';
import { linearRegexEngine } from './linear-regex';
import { ToolError } from './tool-error';

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
 * (counted from where the heap stood when it began). With others evaluating beside it, their growth
 * cannot be told from its own: the budget is then this much per evaluation under way, and the
 * service's share below still stops them all well before the heap's limit. One step may allocate
 * several times that at once (`$append` doubling an array, `$pad` making a long string), and V8
 * ends the whole process when one allocation overshoots the heap limit: the budget stays far below
 * it, and the string and sequence bounds below cap what one step makes.
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

/** The shape of the errors jsonata throws (plain objects, not Error instances). */
interface JsonataFailure {
  code?: string;
  message?: string;
  position?: number;
}

/** The bounds of one evaluation besides the fixed ones (depth, memory, string, sequence and result sizes). */
export interface EvaluationBounds {
  signal: AbortSignal;
  timeLimitMs: number;
}

/**
 * JSONata evaluated under bounds (docs/tools.md#json-transform-automation): json-transform's
 * engine, shared with the service's own expressions (trigger filters and input mappings,
 * docs/orchestration.md). Failures are ToolErrors naming the `expression` parameter: one that does
 * not parse, one that fails or runs past a bound, a result over 1 MiB as JSON.
 */
export class BoundedJsonata {
  private readonly compiled = new CompiledExpressions();

  /** Throws when `text` does not parse. */
  check(text: string): void {
    this.compiled.giveBack(text, this.compiled.take(text));
  }

  /** The value of `text` over `data` as plain JSON (null for no match). */
  async evaluate(text: string, data: unknown, bindings: Record<string, unknown> | undefined, { signal, timeLimitMs }: EvaluationBounds): Promise<unknown> {
    const compiled = this.compiled.take(text);
    guard(compiled, signal, timeLimitMs);
    evaluating += 1;
    let value: unknown;
    try {
      value = await compiled.expression.evaluate(data, bindings);
    } catch (error) {
      signal.throwIfAborted();
      if (error instanceof ToolError) throw error;
      // Type errors, bad arguments, undefined functions: the expression is at fault.
      throw ToolError.invalidInput(
        'expression',
        'an expression that evaluates without error',
        undefined,
        `JSONata evaluation failed: ${describeFailure(error)}`,
      );
    } finally {
      evaluating -= 1;
      this.compiled.giveBack(text, compiled);
    }
    return toJson(value);
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
  /**
   * The least heap in use seen since it began, while no other evaluation ran beside it (else
   * Infinity). Alone, growth counts from here too: garbage present at its start that a collection
   * frees is no room to fill. Beside others it cannot be told from their freed memory: not used.
   */
  heapFloor: number;
}

/** Evaluations under way in this thread. */
let evaluating = 0;

function compile(expression: string): Compiled {
  const timebox: Timebox = { deadline: 0, stepStarted: 0, heapAtStart: 0, heapFloor: Infinity };
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
  Object.assign(timebox, { deadline: started + timeLimitMs, stepStarted: started, heapAtStart: getHeapStatistics().used_heap_size, heapFloor: Infinity });
  let depth = 0;

  // `assign` is typed for string names only; the hooks are symbols.
  expression.assign(EVALUATE_ENTRY as unknown as string, async () => {
    depth += 1;
    if (depth > MAX_DEPTH) {
      throw tooExpensive(`nesting deeper than ${MAX_DEPTH} evaluation steps (non-terminating recursion?)`);
    }
    const heap = getHeapStatistics();
    timebox.heapFloor = evaluating > 1 ? Infinity : Math.min(timebox.heapFloor, heap.used_heap_size);
    const grown = heap.used_heap_size - Math.min(timebox.heapAtStart, timebox.heapFloor);
    // Beside others, the growth seen is all of theirs too: each may use its share of a budget per evaluation.
    if (grown > HEAP_BUDGET_BYTES * Math.max(1, evaluating)) throw tooExpensive(`it took more than ${HEAP_BUDGET_BYTES / 2 ** 20} MB of memory`);
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
