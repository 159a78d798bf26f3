/**
 * JUnit XML as Maven Surefire, jest-junit and pytest write it: a `<testsuites>` root or a lone
 * `<testsuite>`, test cases with `<failure>`, `<error>`, `<skipped>`, and Surefire's rerun
 * elements (`flakyFailure`/`flakyError`: failed, then passed on a rerun; `rerunFailure`/
 * `rerunError`: failed on every rerun).
 */
import { elements as list, type Element } from './xml';

export type CaseOutcome = 'passed' | 'failed' | 'error' | 'skipped';

export interface JunitCase {
  suite: string;
  classname: string;
  name: string;
  /** Seconds as reported, 0 when absent. */
  time: number;
  outcome: CaseOutcome;
  /** The failure or error element, or the skip reason. */
  problem?: { type?: string; message?: string; text?: string };
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

/** The XML element names read as lists even when one is present. */
export const JUNIT_LIST_ELEMENTS = ['testsuite', 'testcase', 'failure', 'error', 'skipped', 'flakyFailure', 'flakyError', 'rerunFailure', 'rerunError'];

/** The suites of a parsed JUnit document, or undefined when its root is not JUnit's. */
export function junitSuites(document: Element): JunitSuite[] | undefined {
  const root = (document.testsuites ?? (document.testsuite !== undefined ? { testsuite: document.testsuite } : undefined)) as Element | undefined;
  if (root === undefined) return undefined;
  const suites: JunitSuite[] = [];
  const walk = (suite: Element, parent?: string): void => {
    const name = text(suite.name) ?? parent ?? '(unnamed suite)';
    const cases = list(suite.testcase).map((entry) => junitCase(entry, name));
    suites.push({ name, time: seconds(suite.time) ?? cases.reduce((sum, entry) => sum + entry.time, 0), cases });
    for (const nested of list(suite.testsuite)) walk(nested, name);
  };
  for (const suite of list(root.testsuite)) walk(suite);
  return suites;
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
    classname: text(entry.classname) ?? '',
    name: text(entry.name) ?? '(unnamed test)',
    time: seconds(entry.time) ?? 0,
    outcome,
    problem: problem && { type: text(problem.type), message: text(problem.message), text: text(problem['#text']) ?? text((problem.stackTrace as Element | undefined)?.['#text'] ?? problem.stackTrace) },
    reruns,
    file: text(entry.file),
    line: Number.isInteger(line) && line > 0 ? line : undefined,
  };
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
