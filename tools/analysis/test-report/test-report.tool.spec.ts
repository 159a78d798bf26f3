import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { runTool } from '@tos/sdk/testing';
import { buildCodeWorkspace } from '../../../test/support/code-tools/workspace';
import { TestReportTool } from './test-report.tool';
import type { TestReportOutput } from './test-report.tool';

let root: string;
beforeAll(() => (root = buildCodeWorkspace(mkdtempSync(path.join(tmpdir(), 'test-report-')))));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const report = (input: Record<string, unknown>, signal?: AbortSignal, onProgress?: () => void) =>
  runTool<TestReportOutput>(TestReportTool, input, { workspaceRoot: root, signal, onProgress });

/** A folder of the workspace holding the given files. */
function folder(name: string, files: Record<string, string>): string {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name, file)), { recursive: true });
    writeFileSync(path.join(root, name, file), text);
  }
  return name;
}

const junit = (cases: string) => `<?xml version="1.0"?><testsuite name="retry" tests="1">${cases}</testsuite>`;

describe('TestReportTool', () => {
  it('keeps of each failure only what a result shows while it reads: reports of long traces are not all held until the summary', async () => {
    // Eight reports of one failure each, with a 12 MiB trace (long lines, as a dumped payload makes them).
    const line = `${'x'.repeat(1023)}\n`;
    const trace = line.repeat(12 * 1024);
    for (let index = 0; index < 8; index++) {
      folder('huge-traces', { [`TEST-${index}.xml`]: junit(`<testcase name="t${index}" classname="c"><failure message="boom ${index}">${trace}</failure></testcase>`) });
    }
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    let held = 0;
    // Measured at each file's start: what the reports read so far still hold, garbage collected.
    const output = await report({ path: 'huge-traces', trace_lines: 3 }, undefined, () => {
      gc();
      held = Math.max(held, process.memoryUsage().heapUsed - before);
    });
    expect(output.totals).toMatchObject({ tests: 8, failed: 8 });
    expect(output.failures[0].trace).toBe(`${'x'.repeat(1023)}\n${'x'.repeat(1023)}\n${'x'.repeat(1023)}\n… ${12 * 1024 - 3} more line(s)`);
    // The old parse kept every trace whole: 7 x 12 MiB by the last file's start.
    expect(held).toBeLessThan(24 * 1024 * 1024);
  }, 60_000);

  it('reads Surefire, jest-junit and pytest results and lcov and Cobertura coverage, telling formats by content', async () => {
    const output = await report({ path: 'code/reports' });
    expect(output.reports.map((entry) => [path.posix.basename(entry.file), entry.format])).toEqual([
      ['cobertura-coverage.xml', 'cobertura'],
      ['lcov.info', 'lcov'],
      ['junit.xml', 'junit'],
      ['TEST-com.acme.shop.CartServiceTest.xml', 'junit'],
      ['TEST-com.acme.shop.PriceFormatterTest.xml', 'junit'],
      ['report.xml', 'junit'],
    ]);
    expect(output.totals).toEqual({ tests: 18, passed: 11, failed: 3, errors: 1, skipped: 3, flaky: 1, suites: 5, duration_ms: 8348 });
    const byName = Object.fromEntries(output.failures.map((entry) => [entry.name, entry]));
    // jest-junit has no message attribute: the first line of the body stands in.
    expect(byName['Cart totals rounds half to even']).toMatchObject({ kind: 'failure', type: null, message: 'Error: expect(received).toBe(expected) // Object.is equality' });
    // pytest escapes the newline of its message as a character reference.
    expect(byName['tests.test_inventory.test_restock_from_csv[utf-8]'].message).toBe('AssertionError: assert 41 == 42\n +  where 41 = len([...])');
    expect(byName.checkoutReservesStock).toMatchObject({ kind: 'error', type: 'java.net.ConnectException', duration_ms: 1803 });
    expect(output.skipped.map((entry) => entry.message)).toEqual([null, 'Guest carts are disabled in this build', 'reportlab not installed']);
    expect(output.slowest[0]).toMatchObject({ name: 'Cart checkout talks to the payment sandbox', duration_ms: 3214 });
    expect(output.flaky).toEqual([expect.objectContaining({ name: 'removesLastItem', attempts: 2, failed_attempts: 1, outcome: 'passed' })]);
    expect(output.coverage).toMatchObject({
      lines: { covered: 16, total: 22, percent: 72.73 },
      branches: { covered: 2, total: 6, percent: 33.33 },
      functions: { covered: 3, total: 4, percent: 75 }, // Cobertura's methods are empty: only lcov counts
    });
    expect(output.coverage?.files?.map((entry) => [entry.file, entry.lines.percent, entry.uncovered_lines])).toEqual([
      ['inventory/csv_import.py', 50, '6-7'],
      ['src/cart/cart.ts', 70, '25-27'],
      ['inventory/stock.py', 80, '7'],
      ['src/price/format.ts', 100, ''],
    ]);
  });

  it('counts a test retried in a second report as flaky when a run passed, and as failing when none did', async () => {
    const name = folder('retries', {
      'attempt-1.xml': junit('<testcase classname="a" name="sometimes"><failure message="boom"/></testcase><testcase classname="a" name="always"><failure message="boom"/></testcase>'),
      'attempt-2.xml': junit('<testcase classname="a" name="sometimes"/><testcase classname="a" name="always"><failure message="boom again"/></testcase>'),
    });
    const output = await report({ path: name });
    expect(output.flaky.map((entry) => [entry.name, entry.attempts, entry.failed_attempts, entry.outcome])).toEqual([
      ['a.always', 2, 2, 'failed'],
      ['a.sometimes', 2, 1, 'passed'],
    ]);
    expect(output.totals.flaky).toBe(1);
  });

  it('bounds every list and says how much was cut', async () => {
    const output = await report({ path: 'code/reports', max_failures: 1, slowest: 1, trace_lines: 1, max_coverage_files: 2 });
    expect(output).toMatchObject({ failures_truncated: 3, coverage: { files_truncated: 2 } });
    expect(output.failures).toHaveLength(1);
    expect(output.slowest).toHaveLength(1);
    expect(output.coverage?.files).toHaveLength(2);
    expect(output.failures[0].trace).toMatch(/^Error: expect\(received\)\.toBe\(expected\) \/\/ Object\.is equality\n… 6 more line\(s\)$/);
  });

  it('lists a malformed report in errors and reads the others; with nothing readable it is INVALID_INPUT', async () => {
    const broken = folder('broken', { 'bad.xml': '<testsuite name="x"><testcase name="y"></testsuite>' });
    copyFileSync(path.join(root, 'code/reports/jest/junit.xml'), path.join(root, broken, 'junit.xml'));
    const output = await report({ path: broken });
    expect(output.totals.tests).toBe(6);
    expect(output.errors).toEqual([{ file: 'broken/bad.xml', message: expect.stringMatching(/^Not well-formed XML: .*\(line 1, column \d+\)$/) }]);

    await expect(report({ path: 'broken/bad.xml' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path' }, message: expect.stringContaining('broken/bad.xml: Not well-formed XML') });
    await expect(report({ path: folder('no-reports', { 'pom.xml': '<project><modelVersion>4.0.0</modelVersion></project>' }) })).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('No JUnit XML, lcov or Cobertura report') });
    await expect(report({ content: 'plain text' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'content' } });
  });

  it("takes the run's duration from the root <testsuites time> when given: parallel suites overlap", async () => {
    const suites = '<testsuite name="a" tests="1" time="120.5"><testcase name="a1" time="120.5"/></testsuite><testsuite name="b" tests="1" time="100"><testcase name="b1" time="100"/></testsuite>';
    const parallel = await report({ content: `<?xml version="1.0"?><testsuites name="all" tests="2" time="130.25">${suites}</testsuites>` });
    expect(parallel.totals).toMatchObject({ tests: 2, suites: 2, duration_ms: 130_250 });
    // Without the root's time, the suites' sum is all there is.
    const untimed = await report({ content: `<?xml version="1.0"?><testsuites name="all" tests="2">${suites}</testsuites>` });
    expect(untimed.totals.duration_ms).toBe(220_500);
    // Reports of a directory add up, each by its own root or suites.
    const both = folder('parallel-runs', { 'a.xml': `<testsuites time="130.25">${suites}</testsuites>`, 'b.xml': `<testsuites>${suites}</testsuites>` });
    expect((await report({ path: both })).totals.duration_ms).toBe(350_750);
  });

  it('does not expand an entity bomb', async () => {
    const laughs = ['<!ENTITY l0 "lol">', ...Array.from({ length: 9 }, (_, index) => `<!ENTITY l${index + 1} "${`&l${index};`.repeat(10)}">`)].join('');
    const output = await report({ content: `<?xml version="1.0"?><!DOCTYPE t [${laughs}]><testsuite name="&l9;"><testcase name="t"/></testsuite>` });
    expect(output.totals.tests).toBe(1);
    expect(JSON.stringify(output).length).toBeLessThan(10_000);
  });

  it('refuses bad input naming the parameter', async () => {
    await expect(report({})).rejects.toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'path', expected: "exactly one of 'path' or 'content'" } });
    await expect(report({ path: '/etc' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path' } });
    await expect(report({ path: 'code/reports', files: ['../../etc/passwd'] })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'files' } });
    await expect(report({ path: 'code/reports', trace_lines: 500 })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'trace_lines' } });
  });

  it('stops when cancelled between files', async () => {
    const text = readFileSync(path.join(root, 'code/reports/jest/junit.xml'), 'utf8');
    const many = folder('many', Object.fromEntries(Array.from({ length: 100 }, (_, index) => [`run-${index}.xml`, text])));
    const controller = new AbortController();
    let calls = 0;
    const running = report({ path: many }, controller.signal, () => {
      calls += 1;
      if (calls === 2) controller.abort(new Error('cancelled'));
    });
    await expect(running).rejects.toThrow('cancelled');
    expect(calls).toBe(2);
  });
});
