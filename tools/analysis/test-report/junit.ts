/**
 * JUnit XML as Maven Surefire, jest-junit and pytest write it: a `<testsuites>` root or a lone
 * `<testsuite>`, test cases with `<failure>`, `<error>`, `<skipped>`, and Surefire's rerun
 * elements (`flakyFailure`/`flakyError`: failed, then passed on a rerun; `rerunFailure`/
 * `rerunError`: failed on every rerun).
 */
import { ownText } from '../../shared/scan';
import { elements as list, type Element } from './xml';

export type CaseOutcome = 'passed' | 'failed' | 'error' | 'skipped';

export interface JunitCase {
  suite: string;
  classname: string;
  name: string;
  /** Seconds as reported, 0 when absent. */
  time: number;
  outcome: CaseOutcome;
  /** The failure or error element, or the skip reason: as much as a result shows, and the trace's line count. */
  problem?: { type?: string; message?: string; text?: string; lines: number };
  /** Failed runs before the reported one (Surefire's rerun elements). */
  reruns: number;
  file?: string;
  line?: number;
}

export interface JunitSuite {
  name: string;
  time: number;
  cases: JunitCase[];
}

/** What a result shows of a failure: its message, and its trace's first lines and characters. */
export const MAX_MESSAGE_CHARS = 2_000;
export const MAX_TRACE_CHARS = 4 * MAX_MESSAGE_CHARS;
/** The trace_lines input's maximum. */
export const MAX_TRACE_LINES = 200;
const MAX_NAME_CHARS = 1_000;

/** The XML element names read as lists even when one is present. */
export const JUNIT_LIST_ELEMENTS = ['testsuite', 'testcase', 'failure', 'error', 'skipped', 'flakyFailure', 'flakyError', 'rerunFailure', 'rerunError'];

export interface JunitReport {
  suites: JunitSuite[];
  /**
   * Seconds the run took: the root `<testsuites time>` when the report gives it (suites run in
   * parallel overlap, so their sum overstates the run), else the sum of the suites' times.
   */
  time: number;
}

/** The suites of a parsed JUnit document and its run time, or undefined when its root is not JUnit's. */
export function junitReport(document: Element): JunitReport | undefined {
  const root = (document.testsuites ?? (document.testsuite !== undefined ? { testsuite: document.testsuite } : undefined)) as Element | undefined;
  if (root === undefined) return undefined;
  const suites: JunitSuite[] = [];
  const walk = (suite: Element, parent?: string): void => {
    const name = ownText(text(suite.name) ?? parent ?? '(unnamed suite)', MAX_NAME_CHARS);
    const cases = list(suite.testcase).map((entry) => junitCase(entry, name));
    suites.push({ name, time: seconds(suite.time) ?? cases.reduce((sum, entry) => sum + entry.time, 0), cases });
    for (const nested of list(suite.testsuite)) walk(nested, name);
  };
  for (const suite of list(root.testsuite)) walk(suite);
  return { suites, time: seconds(root.time) ?? suites.reduce((sum, suite) => sum + suite.time, 0) };
}

function junitCase(entry: Element, suite: string): JunitCase {
  const failure = list(entry.failure)[0];
  const error = list(entry.error)[0];
  const skipped = list(entry.skipped)[0];
  const reruns = [entry.flakyFailure, entry.flakyError, entry.rerunFailure, entry.rerunError].reduce((sum: number, runs) => sum + list(runs).length, 0);
  const [outcome, problem]: [CaseOutcome, Element | undefined] =
    failure !== undefined ? ['failed', failure] : error !== undefined ? ['error', error] : skipped !== undefined ? ['skipped', skipped] : ['passed', undefined];
  const line = Number(text(entry.line));
  return {
    suite,
    classname: ownText(text(entry.classname) ?? '', MAX_NAME_CHARS),
    name: ownText(text(entry.name) ?? '(unnamed test)', MAX_NAME_CHARS),
    time: seconds(entry.time) ?? 0,
    outcome,
    problem: problem && kept(text(problem.type), text(problem.message), text(problem['#text']) ?? text((problem.stackTrace as Element | undefined)?.['#text'] ?? problem.stackTrace)),
    reruns,
    file: text(entry.file),
    line: Number.isInteger(line) && line > 0 ? line : undefined,
  };
}

/**
 * A case's problem cut to what a result can show, as it is read: a report of many failures with
 * long traces is not held whole until the summary (every report of a call would be).
 */
function kept(type: string | undefined, message: string | undefined, trace: string | undefined): NonNullable<JunitCase['problem']> {
  const body = trace?.replace(/\s+$/, '');
  return {
    type: type === undefined ? undefined : ownText(type, MAX_NAME_CHARS),
    message: message === undefined ? undefined : ownText(message, MAX_MESSAGE_CHARS),
    text: body === undefined ? undefined : ownText(body.split('\n', MAX_TRACE_LINES).join('\n'), MAX_TRACE_CHARS),
    lines: body === undefined ? 0 : countLines(body),
  };
}

function countLines(text: string): number {
  let lines = 1;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines++;
  return lines;
}

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() === '' ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** Seconds from a `time` attribute; Surefire may write `1,234.5`. */
function seconds(value: unknown): number | undefined {
  const parsed = Number(text(value)?.replace(/,/g, ''));
  return Number.isFinite(parsed) && parsed >= 0 ? parsed : undefined;
}
