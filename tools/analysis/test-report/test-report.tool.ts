import { exactlyOneOf, Tool, type ToolContext, type ToolHandler, textSource, workspaceInputs, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';
import { fileErrorsOutput } from '../../shared/scan';
import { TEST_REPORT_EXAMPLES } from './examples';
import { MAX_REPORT_BYTES, MAX_REPORT_FILES } from './limits';

export type TestReportInput = ToolInput<typeof definition>;
export type TestReportOutput = ToolOutput<typeof definition>;

const TOTALS = ['tests', 'passed', 'failed', 'errors', 'skipped', 'flaky', 'suites', 'duration_ms'] as const;
const testEntry = { suite: { type: 'string' }, name: { type: 'string' }, report: { type: 'string', description: 'The report file it came from.' } } as const;
const counter = <const Nullable extends boolean = false>(what: string, nullable?: Nullable) =>
  ({
    type: (nullable ? ['object', 'null'] : 'object') as Nullable extends true ? readonly ['object', 'null'] : 'object',
    description: `${what}: covered of total, and the percentage (null when nothing was instrumented).`,
    additionalProperties: false,
    required: ['covered', 'total', 'percent'],
    properties: { covered: { type: 'integer' }, total: { type: 'integer' }, percent: { type: ['number', 'null'] } },
  }) as const;

const definition = defineTool({
  id: 'test-report',
  name: 'Test Report',
  category: 'analysis',
  description:
    'Sums up JUnit XML test results (Maven Surefire, jest-junit, pytest) and lcov or Cobertura coverage: totals, failures with message and trimmed trace, skipped and slowest tests, retried and flaky tests, and line/branch/function coverage per file and in total.',
  status: 'ready',
  version: '1.0.0',
  cacheable: true,
  isolated: true,
  timeout: 60,
  rate_limit: 60,
  input: {
    type: 'object',
    properties: {
      ...workspaceInputs(),
      path: {
        type: 'string',
        maxLength: 1024,
        description: `A report file or a directory in the workspace; every .xml, .info and .lcov file under it is read and recognised by its content (at most ${MAX_REPORT_FILES} files of up to ${MAX_REPORT_BYTES / 1024 / 1024} MiB). Give path or content.`,
      },
      content: { type: 'string', maxLength: 1_000_000, description: 'One report inline: JUnit XML, Cobertura XML or an lcov tracefile. Give path or content.' },
      files: { type: 'array', maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 1024 }, description: 'Only these files, relative to the directory given as path.' },
      max_failures: { type: 'integer', minimum: 1, maximum: 500, default: 50, description: 'Most failures, skipped and flaky tests listed (each list).' },
      slowest: { type: 'integer', minimum: 0, maximum: 100, default: 10, description: 'How many of the slowest tests to list.' },
      trace_lines: { type: 'integer', minimum: 0, maximum: 200, default: 15, description: 'Lines of each failure trace kept; the rest is counted.' },
      max_coverage_files: { type: 'integer', minimum: 0, maximum: 2000, default: 100, description: 'Most files in the coverage list, least covered first.' },
    },
    ...exactlyOneOf('path', 'content'),
  },
  output: {
    type: 'object',
    properties: {
      reports: {
        type: 'array',
        description: 'The reports read, with their format and how many test cases or files each held.',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['file', 'format', 'entries'],
          properties: { file: { type: 'string' }, format: { enum: ['junit', 'lcov', 'cobertura'] }, entries: { type: 'integer' } },
        },
      },
      totals: {
        type: 'object',
        description: 'Counts over every test case as reported; `flaky` counts tests that failed and then passed on a retry.',
        additionalProperties: false,
        properties: Object.fromEntries(TOTALS.map((name) => [name, { type: 'integer' }])) as Record<(typeof TOTALS)[number], { readonly type: 'integer' }>,
      },
      failures: {
        type: 'array',
        description: 'Failed (assertion) and errored (exception) tests, in report order.',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['suite', 'name', 'report', 'kind', 'type', 'message', 'trace', 'duration_ms', 'file', 'line'],
          properties: {
            ...testEntry,
            kind: { enum: ['failure', 'error'] },
            type: { type: ['string', 'null'], description: 'Exception or assertion type when the report names it.' },
            message: { type: 'string' },
            trace: { type: 'string', description: 'The first trace_lines lines, then how many were cut.' },
            duration_ms: { type: 'integer' },
            file: { type: ['string', 'null'] },
            line: { type: ['integer', 'null'] },
          },
        },
      },
      failures_truncated: { type: 'integer', description: 'Failures not listed (over max_failures).' },
      skipped: {
        type: 'array',
        description: 'Skipped tests with the reason when the report gives one.',
        items: { type: 'object', additionalProperties: false, required: ['suite', 'name', 'report', 'message'], properties: { ...testEntry, message: { type: ['string', 'null'] } } },
      },
      slowest: {
        type: 'array',
        description: 'The slowest tests, slowest first.',
        items: { type: 'object', additionalProperties: false, required: ['suite', 'name', 'report', 'duration_ms'], properties: { ...testEntry, duration_ms: { type: 'integer' } } },
      },
      flaky: {
        type: 'array',
        description: 'Tests run more than once with a failure (Surefire reruns, or the same test in several reports): `passed` in the end is flaky, `failed` failed every time.',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['suite', 'name', 'report', 'attempts', 'failed_attempts', 'outcome'],
          properties: { ...testEntry, attempts: { type: 'integer' }, failed_attempts: { type: 'integer' }, outcome: { enum: ['passed', 'failed'] } },
        },
      },
      coverage: {
        type: ['object', 'null'],
        description: 'Null when no coverage report was read.',
        additionalProperties: false,
        properties: {
          lines: counter('Lines'),
          branches: counter('Branches'),
          functions: counter('Functions (null when no report names them)', true),
          files: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['file', 'lines', 'branches', 'functions', 'uncovered_lines'],
              properties: {
                file: { type: 'string' },
                lines: counter('Lines'),
                branches: counter('Branches'),
                functions: counter('Functions', true),
                uncovered_lines: { type: 'string', description: 'Instrumented lines never run, as ranges ("25-27, 40").' },
              },
            },
          },
          files_truncated: { type: 'integer' },
        },
      },
      errors: fileErrorsOutput('Files that could not be read (malformed XML, too large); the others are still summed up.'),
    },
    required: ['reports', 'totals', 'failures', 'failures_truncated', 'skipped', 'slowest', 'flaky', 'coverage', 'errors'],
  },
  examples: TEST_REPORT_EXAMPLES,
});

@Tool(definition)
export class TestReportTool implements ToolHandler<typeof definition> {
  async execute(input: TestReportInput, ctx: ToolContext<typeof definition>): Promise<TestReportOutput> {
    // The XML and LCOV parsers load on the first call, not with the catalogue.
    const { testReport } = await import('./report');
    return testReport(input, textSource(input), ctx);
  }
}
