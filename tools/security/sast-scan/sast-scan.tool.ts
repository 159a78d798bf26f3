import { Tool, type ToolContext, type ToolHandler, workspaceInputs, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';
import { FORGE_SETTINGS, ForgeClients, OWNER_INPUT, PULL_NUMBER_INPUT, REPO_INPUT } from '../../integrations/forge';
import { countsOutput, fileErrorsOutput, pageOutputs, sourceFilesInputs } from '../../shared/scan';
import { pullRequestFiles, pullRequestTarget } from './pull-request';
import { SAST_SCAN_EXAMPLES } from './examples';
import { SAST_RULE_IDS, SAST_RULES, SAST_SEVERITIES } from './rules';
import { MAX_FILE_BYTES, MAX_SCANNED_FILES } from './limits';

export type SastScanInput = ToolInput<typeof definition>;
export type SastScanOutput = ToolOutput<typeof definition>;

const VERSION = '1.0.0';
const recommended = SAST_RULE_IDS.filter((id) => SAST_RULES[id].recommended);

const definition = defineTool({
  id: 'sast-scan',
  name: 'SAST Scan',
  category: 'security',
  description:
    'Static analysis of JavaScript and TypeScript for security bugs: a taint engine follows request data (Express, Koa, Fastify, Nest, Next) and process.argv through assignments, calls and modules into code, command, SQL and NoSQL injection, path traversal, SSRF, open redirect, XSS, XXE, deserialization, prototype pollution, log injection and ReDoS sinks, each finding with its source-to-sink path; with ESLint and the eslint-plugin-security, Microsoft SDL and Mozilla no-unsanitized rules for eval, XSS sinks, non-literal paths and regexps, ReDoS-prone patterns, weak randomness and timing attacks. Vendored and minified files are skipped. Findings by severity with file, line and column, and a SARIF 2.1.0 log (taint paths as code flows) on request.',
  status: 'ready',
  version: VERSION,
  cacheable: true,
  isolated: true,
  timeout: 180,
  task_support: 'optional',
  rate_limit: 30,
  input: {
    type: 'object',
    properties: {
      ...workspaceInputs(),
      ...sourceFilesInputs('scanned', MAX_SCANNED_FILES, MAX_FILE_BYTES),
      rules: {
        type: 'string',
        maxLength: 4000,
        default: 'recommended',
        description: `'recommended' (${recommended.length} rules), 'strict' (all ${SAST_RULE_IDS.length}: adds object injection, http:// URLs, cookies, Angular and WinJS rules), or a comma-separated list of rule ids: ${SAST_RULE_IDS.join(', ')}.`,
      },
      include_vendored: { type: 'boolean', default: false, description: 'Also scan vendored and minified files (a vendor/third_party/bower_components folder, a .min.js name, or minified content: long lines, few of them); skipped by default and listed in skipped.' },
      min_severity: { type: 'string', enum: [...SAST_SEVERITIES].reverse(), default: 'low', description: 'Report findings of at least this severity.' },
      max_results: { type: 'integer', minimum: 1, maximum: 1000, default: 200, description: 'Most findings returned, worst first.' },
      sarif: { type: 'boolean', default: false, description: 'Also return every finding (not only the first max_results) as a SARIF 2.1.0 log, for code-scanning services.' },
      pr: { ...PULL_NUMBER_INPUT, description: 'Scan only the files this pull request adds or changes (listed by the forge at FORGE_API_URL; paths from the workspace root, which must be the repository root). Needs owner and repo.' },
      owner: { ...OWNER_INPUT, description: 'With pr: owner of the forge repository.' },
      repo: { ...REPO_INPUT, description: 'With pr: name of the forge repository.' },
    },
  },
  config: FORGE_SETTINGS,
  output: {
    type: 'object',
    properties: {
      findings: {
        type: 'array',
        description: 'Findings by severity, file, line and column.',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['rule', 'severity', 'file', 'line', 'column', 'end_line', 'end_column', 'message'],
          properties: {
            rule: { type: 'string' },
            severity: { enum: [...SAST_SEVERITIES] },
            file: { type: 'string' },
            line: { type: 'integer' },
            column: { type: 'integer' },
            end_line: { type: 'integer' },
            end_column: { type: 'integer' },
            message: { type: 'string' },
            flow: {
              type: 'array',
              description: 'Taint findings: the path from the source to the sink, source first, each step with file, line, column and what happens there.',
              items: {
                type: 'object',
                additionalProperties: false,
                required: ['file', 'line', 'column', 'note'],
                properties: { file: { type: 'string' }, line: { type: 'integer' }, column: { type: 'integer' }, note: { type: 'string' } },
              },
            },
          },
        },
      },
      ...pageOutputs('Findings'),
      summary: countsOutput(SAST_SEVERITIES, 'Findings per severity (all of them).'),
      files_scanned: { type: 'integer', description: 'Source files parsed and checked.' },
      rules: { type: 'array', items: { type: 'string' }, description: 'The rule ids that ran.' },
      errors: fileErrorsOutput('Files that could not be parsed or were too large; the scan goes on without them.'),
      skipped: fileErrorsOutput('Vendored and minified files not scanned (include_vendored scans them), with why; absent when none were.'),
      sarif: { type: 'object', description: 'With sarif: true, a SARIF 2.1.0 log of every finding, with the rules that ran and their CWE tags.' },
      pull_request: {
        type: 'object',
        description: 'With pr: the pull request and how many files it adds or changes (the scan covers those under path).',
        additionalProperties: false,
        properties: { number: { type: 'integer' }, changed_files: { type: 'integer' } },
      },
    },
    required: ['findings', 'count', 'total', 'truncated', 'summary', 'files_scanned', 'rules', 'errors'],
  },
  examples: SAST_SCAN_EXAMPLES,
});

@Tool(definition)
export class SastScanTool implements ToolHandler<typeof definition> {
  // Made here rather than injected: an isolated tool is also constructed, without arguments, in its worker thread.
  private readonly forges = new ForgeClients();

  async execute(input: SastScanInput, ctx: ToolContext<typeof definition>): Promise<SastScanOutput> {
    // ESLint and its plugins load on the first scan, not with the catalogue.
    const { sastScan } = await import('./scan');
    const target = pullRequestTarget(input);
    if (!target) return sastScan(input, ctx, VERSION);
    const changed = await pullRequestFiles(this.forges, target, ctx);
    return { ...(await sastScan(input, ctx, VERSION, changed)), pull_request: { number: target.pr, changed_files: changed.size } };
  }
}
