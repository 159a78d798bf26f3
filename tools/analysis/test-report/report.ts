/** test-report's work: find JUnit and coverage reports, read them, and sum them up. */
import * as path from 'node:path';
import { ToolError, type ToolContext, type TextSource } from '@tos/sdk';
import { eachFileText, type FileErrors } from '../../shared/scan';
import { COBERTURA_LIST_ELEMENTS, coberturaCoverage, lcovCoverage, looksLikeLcov, type Counter, type FileCoverage } from './coverage';
import { JUNIT_LIST_ELEMENTS, junitReport, MAX_MESSAGE_CHARS, MAX_TRACE_CHARS, type JunitCase, type JunitSuite } from './junit';
import { parseXml } from './xml';
import type { TestReportInput, TestReportOutput } from './test-report.tool';
import { MAX_REPORT_BYTES, MAX_REPORT_FILES } from './limits';

const MAX_LISTED_FILES = 20_000;
const MAX_ERRORS_LISTED = 50;
const REPORT_FILE = /\.(?:xml|info|lcov)$/i;
const INLINE = '(content)';

interface TestEntry { suite: string; name: string; report: string }
type Failure = TestEntry & { kind: 'failure' | 'error'; type: string | null; message: string; trace: string; duration_ms: number; file: string | null; line: number | null };
type Flaky = TestEntry & { attempts: number; failed_attempts: number; outcome: 'passed' | 'failed' };
type Percent = Counter & { percent: number | null };

interface Collected {
  reports: TestReportOutput['reports'];
  suites: Array<JunitSuite & { report: string }>;
  /** Seconds, summed over the JUnit reports (each its own run, or a part of one run in sequence). */
  seconds: number;
  coverage: FileCoverage[];
  errors: FileErrors;
}

export async function testReport(input: TestReportInput, source: TextSource, ctx: ToolContext): Promise<TestReportOutput> {
  const collected: Collected = { reports: [], suites: [], seconds: 0, coverage: [], errors: [] };
  if (source.kind === 'content') {
    await readReport(INLINE, source.content, collected);
  } else {
    const listed = await ctx.workspace.listFiles(source.path, { files: input.files, maxFiles: MAX_LISTED_FILES }, 'path');
    const candidates = listed.filter((file) => REPORT_FILE.test(file.path) || path.posix.basename(file.path) === 'lcov.info');
    if (candidates.length > MAX_REPORT_FILES) {
      throw ToolError.invalidInput('path', `at most ${MAX_REPORT_FILES} report files`, source.path, `More than ${MAX_REPORT_FILES} .xml/.info/.lcov files under '${source.path}'; narrow the path or list files`);
    }
    for await (const { file, text } of eachFileText(ctx, candidates, MAX_REPORT_BYTES, collected.errors, 'read')) await readReport(file.path, text, collected);
  }
  if (collected.reports.length === 0) {
    const where = source.kind === 'content' ? 'content' : 'path';
    const why = collected.errors[0] ? `; ${collected.errors[0].file}: ${collected.errors[0].message}` : '';
    throw ToolError.invalidInput(where, 'JUnit XML, lcov or Cobertura reports', undefined, `No JUnit XML, lcov or Cobertura report could be read from ${where === 'path' ? `'${source.kind === 'path' ? source.path : ''}'` : 'content'}${why}`);
  }
  ctx.progress(100, `${collected.reports.length} report(s) read`);
  return summarise(input, collected);
}

/** Detects a report's format by its content, not its name (any `.xml` may be JUnit or Cobertura). */
async function readReport(file: string, text: string, into: Collected): Promise<void> {
  if (looksLikeLcov(text)) {
    const files = await lcovCoverage(text);
    into.coverage.push(...files);
    into.reports.push({ file, format: 'lcov', entries: files.length });
    return;
  }
  if (!text.trimStart().startsWith('<')) {
    if (file === INLINE) into.errors.push({ file, message: 'Neither XML nor an lcov tracefile' });
    return;
  }
  const parsed = parseXml(text, [...JUNIT_LIST_ELEMENTS, ...COBERTURA_LIST_ELEMENTS]);
  if ('error' in parsed) {
    into.errors.push({ file, message: `Not well-formed XML: ${parsed.error}` });
    return;
  }
  const junit = junitReport(parsed.document);
  if (junit) {
    const { suites } = junit;
    into.suites.push(...suites.map((suite) => ({ ...suite, report: file })));
    into.seconds += junit.time;
    into.reports.push({ file, format: 'junit', entries: suites.reduce((sum, suite) => sum + suite.cases.length, 0) });
    return;
  }
  const coverage = coberturaCoverage(parsed.document);
  if (coverage) {
    into.coverage.push(...coverage);
    into.reports.push({ file, format: 'cobertura', entries: coverage.length });
  }
  // Other XML (pom.xml, IDE files) is not a report: passed over silently.
}

function summarise(input: TestReportInput, collected: Collected): TestReportOutput {
  const cases = collected.suites.flatMap((suite) => suite.cases.map((entry) => ({ ...entry, report: suite.report })));
  const count = (outcome: JunitCase['outcome']) => cases.filter((entry) => entry.outcome === outcome).length;
  const flaky = flakyTests(cases);
  const failing = cases.filter((entry) => entry.outcome === 'failed' || entry.outcome === 'error');
  return {
    reports: collected.reports,
    totals: {
      tests: cases.length,
      passed: count('passed'),
      failed: count('failed'),
      errors: count('error'),
      skipped: count('skipped'),
      flaky: flaky.filter((entry) => entry.outcome === 'passed').length,
      suites: collected.suites.length,
      duration_ms: milliseconds(collected.seconds),
    },
    failures: failing.slice(0, input.max_failures).map((entry) => failure(entry, input.trace_lines)),
    failures_truncated: Math.max(0, failing.length - input.max_failures),
    skipped: cases.filter((entry) => entry.outcome === 'skipped').slice(0, input.max_failures).map((entry) => ({ ...testEntry(entry), message: entry.problem?.message ?? null })),
    slowest: [...cases].sort((a, b) => b.time - a.time).slice(0, input.slowest).map((entry) => ({ ...testEntry(entry), duration_ms: milliseconds(entry.time) })),
    flaky: flaky.slice(0, input.max_failures),
    coverage: coverageSummary(collected.coverage, input.max_coverage_files),
    errors: collected.errors.slice(0, MAX_ERRORS_LISTED),
  };
}

type ReportedCase = JunitCase & { report: string };

/** The class joins the name where it says more than the suite (pytest's modules); jest-junit repeats the name as class, Surefire the suite. */
const testEntry = (entry: ReportedCase): TestEntry => ({
  suite: entry.suite,
  name: entry.classname !== '' && entry.classname !== entry.suite && entry.classname !== entry.name ? `${entry.classname}.${entry.name}` : entry.name,
  report: entry.report,
});

function failure(entry: ReportedCase, traceLines: number): Failure {
  const body = entry.problem?.text ?? '';
  const message = entry.problem?.message ?? body.split('\n').find((line) => line.trim() !== '') ?? '';
  return {
    ...testEntry(entry),
    kind: entry.outcome === 'error' ? 'error' : 'failure',
    type: entry.problem?.type ?? null,
    message: message.slice(0, MAX_MESSAGE_CHARS),
    trace: trimTrace(body, entry.problem?.lines ?? 0, traceLines),
    duration_ms: milliseconds(entry.time),
    file: entry.file ?? null,
    line: entry.line ?? null,
  };
}

/** The first lines of a trace (kept: its first lines; total: all it had), and how many were cut. */
function trimTrace(kept: string, total: number, keep: number): string {
  const head = kept.split('\n').slice(0, keep).join('\n').slice(0, MAX_TRACE_CHARS);
  return total <= keep ? head : `${head}\n… ${total - keep} more line(s)`;
}

/**
 * Tests run more than once with at least one failure: Surefire's rerun elements within a report,
 * or the same test in more than one report (a CI retry). `passed` when a run passed: flaky.
 */
function flakyTests(cases: ReportedCase[]): Flaky[] {
  const byTest = new Map<string, ReportedCase[]>();
  for (const entry of cases) {
    const key = `${entry.classname}\u0000${entry.name}`;
    byTest.set(key, [...(byTest.get(key) ?? []), entry]);
  }
  const flaky: Flaky[] = [];
  for (const runs of byTest.values()) {
    const attempts = runs.reduce((sum, run) => sum + 1 + run.reruns, 0);
    const failedAttempts = runs.reduce((sum, run) => sum + run.reruns + (run.outcome === 'failed' || run.outcome === 'error' ? 1 : 0), 0);
    if (attempts < 2 || failedAttempts === 0) continue;
    const passed = runs.some((run) => run.outcome === 'passed');
    flaky.push({ ...testEntry(runs[runs.length - 1]), attempts, failed_attempts: failedAttempts, outcome: passed ? 'passed' : 'failed' });
  }
  return flaky.sort((a, b) => b.failed_attempts - a.failed_attempts || a.name.localeCompare(b.name));
}

function coverageSummary(files: FileCoverage[], maxFiles: number): TestReportOutput['coverage'] {
  if (files.length === 0) return null;
  const sum = (pick: (file: FileCoverage) => Counter | null): Percent | null => {
    const counters = files.map(pick).filter((counter): counter is Counter => counter !== null);
    if (counters.length === 0) return null;
    return percent({ covered: counters.reduce((total, counter) => total + counter.covered, 0), total: counters.reduce((total, counter) => total + counter.total, 0) });
  };
  const worstFirst = [...files].sort((a, b) => ratio(a.lines) - ratio(b.lines) || b.lines.total - a.lines.total || a.file.localeCompare(b.file));
  return {
    lines: sum((file) => file.lines) as Percent,
    branches: sum((file) => file.branches) as Percent,
    functions: sum((file) => file.functions),
    files: worstFirst.slice(0, maxFiles).map((file) => ({
      file: file.file,
      lines: percent(file.lines),
      branches: percent(file.branches),
      functions: file.functions && percent(file.functions),
      uncovered_lines: ranges(file.uncovered),
    })),
    files_truncated: Math.max(0, files.length - maxFiles),
  };
}

const ratio = (counter: Counter) => (counter.total === 0 ? 1 : counter.covered / counter.total);
const percent = (counter: Counter): Percent => ({ ...counter, percent: counter.total === 0 ? null : Math.round((counter.covered / counter.total) * 10_000) / 100 });
const milliseconds = (seconds: number) => Math.round(seconds * 1000);

/** `[3, 4, 5, 9]` → `"3-5, 9"`, cut after 50 ranges. */
function ranges(lines: number[]): string {
  const parts: string[] = [];
  for (let index = 0; index < lines.length; ) {
    let end = index;
    while (end + 1 < lines.length && lines[end + 1] === lines[end] + 1) end += 1;
    parts.push(end === index ? `${lines[index]}` : `${lines[index]}-${lines[end]}`);
    index = end + 1;
  }
  return parts.length > 50 ? `${parts.slice(0, 50).join(', ')}, …` : parts.join(', ');
}
