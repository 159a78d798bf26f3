import { stat } from 'node:fs/promises';
import { posix } from 'node:path';
import { compareText, exactlyOneOf, refInput, Tool, ToolError, type ToolContext, type ToolHandler, textSource, workspaceInputs, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';
import { scanText, SEVERITIES, type Engines, type Finding, type Heuristics } from './findings';
import { HISTORY_LIMITS } from './limits';
import { loadSecretlint } from './secretlint';
import { isBinary } from './text';

const CONTENT_FILE = '<content>';
const MAX_FILES = 5_000;
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_FINDINGS = 1_000;

type SecretScanInput = ToolInput<typeof definition>;

type SecretScanOutput = ToolOutput<typeof definition>;

const exampleKey = 'sk_svc_EXAMPLEexample000000000000000000';
const exampleGithubToken = 'ghp_EXAMPLEexampleEXAMPLEexample00000000';

const definition = defineTool({
  id: 'secret-scan',
  name: 'Secret Scan',
  category: 'security',
  description:
    "Finds leaked credentials (gitleaks's and secretlint's provider rules, private keys, this service's sk_ keys, high-entropy secrets) in text, workspace files or a repository's git history, with values redacted.",
  status: 'ready',
  version: '1.0.0',
  cacheable: true,
  isolated: true,
  timeout: 120,
  rate_limit: 60,
  input: {
    type: 'object',
    properties: {
      ...workspaceInputs(),
      content: { type: 'string', maxLength: 1_000_000, description: 'Inline text to scan; give this or path.' },
      path: {
        type: 'string',
        maxLength: 1024,
        description: 'A file or directory in the workspace to scan (up to 5000 files; files over 1 MiB and binary files are skipped).',
      },
      files: {
        type: 'array',
        maxItems: 1000,
        items: { type: 'string', minLength: 1, maxLength: 1024 },
        description: 'Only scan these paths, relative to the directory given as path.',
      },
      include_entropy: {
        type: 'boolean',
        default: true,
        description: 'Also report high-entropy values assigned to secret-looking names (password, token, api_key, ...).',
      },
      include_passwords: {
        type: 'boolean',
        default: false,
        description: 'Also report literal values of any strength assigned to password-like names (password, pass, pwd, secret, salt, NAME_KEY) in assignments, JSON, XML, .netrc-style lines and PHP define(), and crypt/bcrypt password hashes. Finds weak passwords in config files; reports test fixtures too.',
      },
      history: {
        type: 'boolean',
        default: false,
        description: `Scan the git history of the repository whose .git folder is in the directory given as path: every file version reachable from history_ref, each finding with the commit that introduced it (at most ${HISTORY_LIMITS.commits} commits, ${HISTORY_LIMITS.blobs} file versions, ${HISTORY_LIMITS.bytes / 2 ** 20} MiB and ${HISTORY_LIMITS.ms / 1000} s; versions over 1 MiB and binary ones are skipped).`,
      },
      history_ref: {
        ...refInput(),
        default: 'HEAD',
        description: 'With history: the branch, tag or commit whose history is scanned (ref instead opens the files at a commit, without their history).',
      },
    },
    ...exactlyOneOf('content', 'path'),
  },
  output: {
    type: 'object',
    properties: {
      findings: {
        type: 'array',
        description: `Leaked secrets, sorted by file, line and column, at most ${MAX_FINDINGS}; the matched value is redacted.`,
        items: {
          type: 'object',
          required: ['rule', 'severity', 'file', 'line', 'column', 'message', 'match'],
          additionalProperties: false,
          properties: {
            rule: { type: 'string' },
            severity: { enum: [...SEVERITIES] },
            file: { type: 'string' },
            line: { type: 'integer' },
            column: { type: 'integer' },
            message: { type: 'string' },
            match: { type: 'string' },
            commit: { type: 'string', description: 'With history: the commit that introduced the secret.' },
          },
        },
      },
      count: { type: 'integer', description: 'Number of findings returned.' },
      files_scanned: { type: 'integer', description: 'Text files scanned (1 for inline content); with history, distinct file versions scanned.' },
      commits_scanned: { type: 'integer', description: 'With history: commits walked.' },
      truncated: { type: 'boolean', description: `True when the scan stopped at ${MAX_FINDINGS} findings, or history at one of its bounds.` },
    },
    required: ['findings', 'count', 'files_scanned', 'truncated'],
  },
  examples: [
    {
      name: 'An env file with a service key and a GitHub token',
      input: { content: `# fake values\nTOS_API_KEY=${exampleKey}\nGITHUB_TOKEN=${exampleGithubToken}\n` },
      output: {
        findings: [
          {
            rule: 'tos/api-key',
            severity: 'critical',
            file: CONTENT_FILE,
            line: 2,
            column: 13,
            message: 'Found a Tool Orchestration Service API key (svc)',
            match: 'sk_s**** (39 chars)',
          },
          {
            rule: 'secretlint/github/GITHUB_TOKEN',
            severity: 'high',
            file: CONTENT_FILE,
            line: 3,
            column: 14,
            message: 'Found GitHub Token',
            match: 'ghp_**** (40 chars)',
          },
        ],
        count: 2,
        files_scanned: 1,
        truncated: false,
      },
    },
    {
      name: 'A high-entropy password in a config file',
      input: { content: 'database:\n  host: db.internal\n  password: "Zq8xR2mLp9Tv4WcY"\n' },
      output: {
        findings: [
          {
            rule: 'tos/high-entropy-assignment',
            severity: 'medium',
            file: CONTENT_FILE,
            line: 3,
            column: 14,
            message: 'High-entropy value (4.00 bits/char) assigned to password',
            match: 'Zq8x**** (16 chars)',
          },
        ],
        count: 1,
        files_scanned: 1,
        truncated: false,
      },
    },
    {
      name: 'Clean text',
      input: { content: 'export const retries = 3;\nconst password = process.env.DB_PASSWORD;\n' },
      output: { findings: [], count: 0, files_scanned: 1, truncated: false },
    },
  ],
});

@Tool(definition)
export class SecretScanTool implements ToolHandler<typeof definition> {
  async execute(input: SecretScanInput, ctx: ToolContext<typeof definition>): Promise<SecretScanOutput> {
    const source = textSource(input);
    if (source.kind === 'content' && input.files !== undefined) {
      throw ToolError.invalidInput('files', "'files' only together with a directory 'path'", input.files);
    }
    if (input.history && (source.kind === 'content' || input.files !== undefined)) {
      throw ToolError.invalidInput('history', "'history' with a directory 'path' holding .git, without 'files'", input.history);
    }
    if (input.history && input.ref !== undefined) {
      // The service opens `ref` as a tree without its .git folder: the history is not there.
      throw ToolError.invalidInput('ref', "'history_ref' to choose where the history walk starts ('ref' opens the files at a commit, without their history)", input.ref);
    }
    const { loadGitleaksRules } = await import('./gitleaks-engine');
    const [secretlint, gitleaks] = await Promise.all([loadSecretlint(), loadGitleaksRules()]);
    const engines: Engines = { secretlint, gitleaks };
    const heuristics = heuristicsOf(input);
    ctx.signal.throwIfAborted();

    if (source.kind === 'content') {
      const findings = await scanText(source.content, CONTENT_FILE, heuristics, engines);
      return summary(findings, 1);
    }
    if (input.history) return this.history(source.path, input, engines, ctx);

    const files = await ctx.workspace.listFiles(source.path, { files: input.files, maxFiles: MAX_FILES, maxFileBytes: MAX_FILE_BYTES }, 'path');
    const findings: Finding[] = [];
    let scanned = 0;
    let nextProgress = 10;
    // Files come sorted by path, and each file's findings by position, so the list stays sorted.
    for (const [index, file] of files.entries()) {
      ctx.signal.throwIfAborted();
      const percent = Math.floor((index / files.length) * 100);
      if (files.length >= 20 && percent >= nextProgress) {
        ctx.progress(percent, `${index} of ${files.length} files`);
        nextProgress = percent + 10;
      }
      const text = await ctx.workspace.readText(file.path, MAX_FILE_BYTES, 'path');
      if (isBinary(text)) continue;
      scanned += 1;
      findings.push(...(await scanText(text, file.path, heuristics, engines)));
      if (findings.length > MAX_FINDINGS) break;
    }
    return summary(findings, scanned);
  }

  private async history(directory: string, input: SecretScanInput, engines: Engines, ctx: ToolContext<typeof definition>): Promise<SecretScanOutput> {
    const normalized = posix.normalize(directory).replace(/\/+$/, '');
    const prefix = normalized === '.' ? '' : normalized;
    const gitPath = prefix ? `${prefix}/.git` : '.git';
    const gitdir = await ctx.workspace.resolve(gitPath, 'path');
    const entry = await stat(gitdir).catch(() => undefined);
    if (!entry?.isDirectory()) throw ToolError.invalidInput('path', 'a directory holding a .git folder (history)', directory, `No .git folder in ${directory}`);
    const { scanHistory } = await import('./history');
    const scan = await scanHistory({ gitdir, prefix, ref: input.history_ref, heuristics: heuristicsOf(input), engines, maxFindings: MAX_FINDINGS, signal: ctx.signal });
    const sorted = [...scan.findings].sort((a, b) => compareText(a.file, b.file) || a.line - b.line || a.column - b.column || compareText(a.commit!, b.commit!));
    const result = summary(sorted, scan.blobs);
    return { ...result, commits_scanned: scan.commits, truncated: result.truncated || scan.truncated };
  }
}

function heuristicsOf(input: SecretScanInput): Heuristics {
  return { entropy: input.include_entropy, passwords: input.include_passwords };
}

function summary(findings: Finding[], filesScanned: number): SecretScanOutput {
  const kept = findings.slice(0, MAX_FINDINGS);
  return { findings: kept, count: kept.length, files_scanned: filesScanned, truncated: findings.length > MAX_FINDINGS };
}
