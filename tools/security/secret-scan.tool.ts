import { createRequire } from 'node:module';
import type { lintSource as LintSource } from '@secretlint/core';
import { exactlyOneOf, importEsm, Tool, ToolError, type ToolContext, type ToolHandler, textSource, workspaceInputs } from '../../src/tools/sdk';

const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
type Severity = (typeof SEVERITIES)[number];

const CONTENT_FILE = '<content>';
const MAX_FILES = 5_000;
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_FINDINGS = 1_000;
/** A file whose first bytes hold a NUL is binary (the rule git and grep use). */
const BINARY_SNIFF_CHARS = 8_000;

/**
 * High-entropy rule: a value of 16..256 non-blank characters, quoted or alone on a
 * `NAME=value` line, assigned to a secret-looking name, mixing letters and digits, with a
 * Shannon entropy of at least 3.5 bits per character. Random alphanumeric strings of that
 * length score about 3.7-4.2; words, repeated characters and placeholders score below.
 */
const ENTROPY_THRESHOLD = 3.5;
const SECRET_NAME = /passw(?:or)?d|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth[_-]?key|credential/i;
const QUOTED_ASSIGNMENT = /(?<![\w.-])(["']?)([A-Za-z_][\w.-]{0,63})\1[ \t]*(?::=|=>|=|:)[ \t]*(["'`])([^\s"'`]{16,256})\3/dg;
const BARE_ASSIGNMENT = /^[ \t]*(?:export[ \t]+)?([A-Za-z_][\w.-]{0,63})[ \t]*[=:][ \t]*([^\s"'`#]{16,256})[ \t]*$/dgm;

/** This service's own API keys (docs/API.md#keys-and-scopes). */
const SERVICE_KEY = /(?<![A-Za-z0-9_])sk_(user|svc|temp)_[A-Za-z0-9]{32}(?![A-Za-z0-9])/g;

/** secretlint findings are `high` unless listed here by rule, or by rule and message id. */
const SECRETLINT_SEVERITIES: Readonly<Record<string, Severity>> = {
  privatekey: 'critical',
  gcp: 'critical',
  'aws/AWSSecretAccessKey': 'critical',
  'aws/AWSAccessKeyID': 'medium',
  'aws/AWSAccountID': 'low',
  'slack/IncomingWebhook': 'medium',
};

interface SecretScanInput {
  content?: string;
  path?: string;
  files?: string[];
  include_entropy: boolean;
}

interface Finding {
  rule: string;
  severity: Severity;
  file: string;
  line: number;
  column: number;
  message: string;
  match: string;
}

interface SecretScanOutput {
  findings: Finding[];
  count: number;
  files_scanned: number;
  truncated: boolean;
}

/** A finding before it is located and redacted: a range of the scanned text. */
interface Candidate {
  rule: string;
  severity: Severity;
  message: string;
  start: number;
  end: number;
  /** Provider and service-key rules are specific; the entropy heuristic is not. */
  specific: boolean;
}

const exampleKey = 'sk_svc_EXAMPLEexample000000000000000000';
const exampleGithubToken = 'ghp_EXAMPLEexampleEXAMPLEexample00000000';

@Tool({
  id: 'secret-scan',
  name: 'Secret Scan',
  category: 'security',
  description:
    "Finds leaked credentials (provider tokens, private keys, this service's sk_ keys, high-entropy secrets) in text or workspace files, with values redacted.",
  status: 'ready',
  version: '1.0.0',
  cacheable: true,
  isolated: true,
  timeout: 120,
  rate_limit: 60,
  inputs: {
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
  },
  input_rules: exactlyOneOf('content', 'path'),
  outputs: {
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
        },
      },
    },
    count: { type: 'integer', description: 'Number of findings returned.' },
    files_scanned: { type: 'integer', description: 'Text files scanned (1 for inline content).' },
    truncated: { type: 'boolean', description: `True when the scan stopped at ${MAX_FINDINGS} findings.` },
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
})
export class SecretScanTool implements ToolHandler<SecretScanInput, SecretScanOutput> {
  async execute(input: SecretScanInput, ctx: ToolContext): Promise<SecretScanOutput> {
    const source = textSource(input);
    if (source.kind === 'content' && input.files !== undefined) {
      throw ToolError.invalidInput('files', "'files' only together with a directory 'path'", input.files);
    }
    const secretlint = await loadSecretlint();
    ctx.signal.throwIfAborted();

    if (source.kind === 'content') {
      const findings = await scanText(source.content, CONTENT_FILE, input.include_entropy, secretlint);
      return summary(findings, 1);
    }

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
      if (text.slice(0, BINARY_SNIFF_CHARS).includes('\0')) continue;
      scanned += 1;
      findings.push(...(await scanText(text, file.path, input.include_entropy, secretlint)));
      if (findings.length > MAX_FINDINGS) break;
    }
    return summary(findings, scanned);
  }
}

function summary(findings: Finding[], filesScanned: number): SecretScanOutput {
  const kept = findings.slice(0, MAX_FINDINGS);
  return { findings: kept, count: kept.length, files_scanned: filesScanned, truncated: findings.length > MAX_FINDINGS };
}

async function scanText(text: string, file: string, includeEntropy: boolean, secretlint: Secretlint): Promise<Finding[]> {
  const candidates = [
    ...(await secretlintCandidates(text, file, secretlint)),
    ...serviceKeyCandidates(text),
    ...(includeEntropy ? entropyCandidates(text) : []),
  ];
  const locate = locator(text);
  return withoutOverlaps(candidates).map((candidate) => ({
    rule: candidate.rule,
    severity: candidate.severity,
    file,
    ...locate(candidate.start),
    message: candidate.message,
    match: redact(text.slice(candidate.start, candidate.end)),
  }));
}

// ---------------------------------------------------------------- secretlint

interface Secretlint {
  lintSource: typeof LintSource;
  config: Parameters<typeof LintSource>[0]['options']['config'];
}

/** secretlint is published as ES modules only (see importEsm). */
let secretlint: Promise<Secretlint> | undefined;

function loadSecretlint(): Promise<Secretlint> {
  secretlint ??= (async () => {
    const corePath = require.resolve('@secretlint/core');
    const presetPath = require.resolve('@secretlint/secretlint-rule-preset-recommend');
    // The copy of the profiler secretlint itself uses (resolved from @secretlint/core's location).
    const profilerPath = createRequire(corePath).resolve('@secretlint/profiler');
    const [core, preset, profiler] = (await Promise.all([corePath, presetPath, profilerPath].map((file) => importEsm(file)))) as [
      typeof import('@secretlint/core'),
      typeof import('@secretlint/secretlint-rule-preset-recommend'),
      { secretLintProfiler: { mark: (marker: unknown) => void } },
    ];
    // secretlint's always-on profiler adds ~50 performance marks per scanned text to the global
    // timeline and to an array it searches linearly: in a long-lived service memory grows
    // without bound and every scan gets slower. Nothing here reads the profile.
    profiler.secretLintProfiler.mark = () => undefined;
    return {
      lintSource: core.lintSource,
      config: {
        rules: [
          {
            id: '@secretlint/secretlint-rule-preset-recommend',
            rule: preset.creator,
            // AWS access key ids are only reported on request; a leaked id points at a leaked pair.
            rules: [{ id: '@secretlint/secretlint-rule-aws', options: { enableIDScanRule: true } }],
          },
        ],
      },
    };
  })();
  return secretlint;
}

async function secretlintCandidates(text: string, file: string, engine: Secretlint): Promise<Candidate[]> {
  const result = await engine.lintSource({
    source: { content: text, filePath: file, ext: extensionOf(file), contentType: 'text' },
    // maskSecrets: secretlint's messages quote the secret; masked, they can be shown.
    options: { config: engine.config, maskSecrets: true, noPhysicFilePath: true },
  });
  return result.messages.map((message) => {
    const rule = message.ruleId.replace(/^@secretlint\/secretlint-rule-/, '');
    return {
      rule: `secretlint/${rule}/${message.messageId}`,
      severity: SECRETLINT_SEVERITIES[`${rule}/${message.messageId}`] ?? SECRETLINT_SEVERITIES[rule] ?? 'high',
      message: cleanMessage(message.message),
      start: message.range[0],
      end: message.range[1],
      specific: true,
    };
  });
}

/** "found GitHub Token(*****): *****" -> "Found GitHub Token": the masked values say nothing. */
function cleanMessage(message: string): string {
  const text = message.replace(/\s*\(\*+\)/g, '').replace(/:\s*\*+\s*$/, '');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function extensionOf(file: string): string {
  const dot = file.lastIndexOf('.');
  return dot > file.lastIndexOf('/') ? file.slice(dot) : '';
}

// ---------------------------------------------------------------- own rules

function serviceKeyCandidates(text: string): Candidate[] {
  return [...text.matchAll(SERVICE_KEY)].map((match): Candidate => ({
    rule: 'tos/api-key',
    severity: 'critical',
    message: `Found a Tool Orchestration Service API key (${match[1]})`,
    start: match.index,
    end: match.index + match[0].length,
    specific: true,
  }));
}

function entropyCandidates(text: string): Candidate[] {
  const candidates: Candidate[] = [];
  const assignments = [
    ...[...text.matchAll(QUOTED_ASSIGNMENT)].map((match) => ({ name: match[2], value: match[4], start: match.indices![4][0] })),
    ...[...text.matchAll(BARE_ASSIGNMENT)].map((match) => ({ name: match[1], value: match[2], start: match.indices![2][0] })),
  ];
  for (const { name, value, start } of assignments) {
    if (!SECRET_NAME.test(name) || !/[A-Za-z]/.test(value) || !/\d/.test(value)) continue;
    const entropy = shannonEntropy(value);
    if (entropy < ENTROPY_THRESHOLD) continue;
    candidates.push({
      rule: 'tos/high-entropy-assignment',
      severity: 'medium',
      message: `High-entropy value (${entropy.toFixed(2)} bits/char) assigned to ${name}`,
      start,
      end: start + value.length,
      specific: false,
    });
  }
  return candidates;
}

/** Bits per character of the value's own character distribution. */
function shannonEntropy(value: string): number {
  const counts = new Map<string, number>();
  for (const char of value) counts.set(char, (counts.get(char) ?? 0) + 1);
  let entropy = 0;
  for (const count of counts.values()) {
    const p = count / value.length;
    entropy -= p * Math.log2(p);
  }
  return entropy;
}

// ---------------------------------------------------------------- merging and output

const SEVERITY_RANK: Readonly<Record<Severity, number>> = { critical: 0, high: 1, medium: 2, low: 3 };

/**
 * One finding per run of overlapping ranges (e.g. secretlint and the entropy rule on the same
 * value): the specific rule wins over the heuristic, then the higher severity, then the earlier.
 */
function withoutOverlaps(candidates: Candidate[]): Candidate[] {
  const byStart = [...candidates].sort((a, b) => a.start - b.start || a.end - b.end);
  const kept: Candidate[] = [];
  let clusterEnd = -1;
  for (const candidate of byStart) {
    const current = kept[kept.length - 1];
    if (current !== undefined && candidate.start < clusterEnd) {
      if (better(candidate, current)) kept[kept.length - 1] = candidate;
      clusterEnd = Math.max(clusterEnd, candidate.end);
    } else {
      kept.push(candidate);
      clusterEnd = candidate.end;
    }
  }
  return kept;
}

function better(a: Candidate, b: Candidate): boolean {
  if (a.specific !== b.specific) return a.specific;
  return SEVERITY_RANK[a.severity] < SEVERITY_RANK[b.severity];
}

/** 1-based line and column of an offset. */
function locator(text: string): (offset: number) => { line: number; column: number } {
  const lineStarts = [0];
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) lineStarts.push(index + 1);
  return (offset) => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (lineStarts[middle] <= offset) low = middle;
      else high = middle - 1;
    }
    return { line: low + 1, column: offset - lineStarts[low] + 1 };
  };
}

/** Never the secret: its first 4 characters (none for short values) and its length. */
function redact(value: string): string {
  return `${value.length >= 12 ? value.slice(0, 4) : ''}**** (${value.length} chars)`;
}
