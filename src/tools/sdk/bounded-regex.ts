import { Script, createContext } from 'node:vm';
import { ToolError } from './tool-error';

/** One context and one compiled call for the process: each bounded run only swaps the function. */
const sandbox = createContext({ run: (): unknown => undefined });
const call = new Script('run()');

/**
 * `run()` stopped after `timeoutMs` wherever it is (V8 interrupts it), throwing `overran()` instead:
 * for synchronous work over caller-supplied input that cannot check a clock itself. Each call
 * costs about 0.1–0.2 ms more than calling `run` (Node starts a watchdog thread per bounded run).
 */
export function boundedRun<T>(run: () => T, timeoutMs: number, overran: () => Error): T {
  sandbox.run = run;
  try {
    return call.runInContext(sandbox, { timeout: timeoutMs }) as T;
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw err;
    throw overran();
  } finally {
    sandbox.run = () => undefined;
  }
}

/**
 * `pattern.test(text)` for a caller-supplied pattern, stopped after `timeoutMs` (V8 interrupts the
 * backtracking), so a catastrophic pattern (`(a+)+$`) cannot stall the event loop. Overrunning is
 * the caller's fault: INVALID_INPUT naming `parameter`.
 */
export function boundedRegexTest(pattern: RegExp, text: string, parameter: string, timeoutMs = 50): boolean {
  pattern.lastIndex = 0;
  return bounded(() => pattern.test(text), pattern, parameter, timeoutMs);
}

/**
 * `pattern.exec(text)` from `pattern.lastIndex` (a global or sticky pattern goes on where its last
 * match ended), stopped after `timeoutMs` like boundedRegexTest.
 */
export function boundedRegexExec(pattern: RegExp, text: string, parameter: string, timeoutMs = 50): RegExpExecArray | null {
  return bounded(() => pattern.exec(text), pattern, parameter, timeoutMs);
}

function bounded<T>(run: () => T, pattern: RegExp, parameter: string, timeoutMs: number): T {
  return boundedRun(run, timeoutMs, () => regexTookTooLong(parameter, pattern.source, timeoutMs));
}

/** INVALID_INPUT for a caller-supplied regular expression that ran past `timeoutMs`. */
export function regexTookTooLong(parameter: string, source: string, timeoutMs: number): ToolError {
  return ToolError.invalidInput(parameter, `a regular expression that matches within ${timeoutMs} ms`, source, `The regular expression in '${parameter}' took longer than ${timeoutMs} ms (catastrophic backtracking?)`);
}

/** A caller-supplied regular expression compiled, or INVALID_INPUT naming `parameter`. */
export function compileRegex(source: string, parameter: string, flags = ''): RegExp {
  try {
    return new RegExp(source, flags);
  } catch (err) {
    throw ToolError.invalidInput(parameter, 'a valid regular expression', source, `Invalid regular expression in '${parameter}': ${(err as Error).message}`);
  }
}
