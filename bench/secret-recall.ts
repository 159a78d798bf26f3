/**
 * Recall of secret-scan on a tree of planted secrets with ground truth (bench/README.md, "Secret
 * recall"). Fetches nothing: it reads the tree given on the command line and the expected list.
 *
 *   npx ts-node --transpile-only bench/secret-recall.ts <tree> <expected.json> [--passwords]
 *
 * expected.json, paths relative to the tree, either
 * - { "planted": [{ "file", "line", "what" }], "history"?: [{ "gitdir", "prefix", "planted":
 *   [{ "commit", "file", "line", "what" }] }] }: a planted secret is found when a finding starts on
 *   its line (and, in history, at its commit); every other finding is printed as unexpected (a
 *   false positive, or a secret the list does not name); or
 * - { "counts": [{ "file", "risk", "informative" }] }: per-file counts of secret lines, scored as
 *   leaky-repo's .leaky-meta/benchmark.py scores a tool: a file's findings up to its count are
 *   finds, the findings over it false positives.
 */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { scanText, type Engines, type Finding, type Heuristics } from '../tools/security/secret-scan/findings';
import { loadGitleaksRules } from '../tools/security/secret-scan/gitleaks-engine';
import { scanHistory } from '../tools/security/secret-scan/history';
import { loadSecretlint } from '../tools/security/secret-scan/secretlint';
import { isBinary } from '../tools/security/secret-scan/text';

interface Planted {
  file: string;
  line: number;
  what: string;
  commit?: string;
}

interface Counted {
  file: string;
  risk: number;
  informative: number;
}

interface Expected {
  planted?: Planted[];
  counts?: Counted[];
  history?: Array<{ gitdir: string; prefix: string; planted: Planted[] }>;
}

const MAX_FILE_BYTES = 1024 * 1024;

/** Files of the tree as the tool lists them: no .git or node_modules, nor git folders kept under another name. */
async function filesOf(root: string, dir = ''): Promise<string[]> {
  const entries = await readdir(path.join(root, dir), { withFileTypes: true });
  if (entries.some((e) => e.name === 'HEAD') && entries.some((e) => e.name === 'objects')) return [];
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const relative = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory() && entry.name !== '.git' && entry.name !== 'node_modules') files.push(...(await filesOf(root, relative)));
    else if (entry.isFile()) files.push(relative);
  }
  return files;
}

async function scanTree(root: string, engines: Engines, heuristics: Heuristics): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const file of await filesOf(root)) {
    if ((await stat(path.join(root, file))).size > MAX_FILE_BYTES) continue;
    const text = await readFile(path.join(root, file), 'utf8');
    if (!isBinary(text)) findings.push(...(await scanText(text, file, heuristics, engines)));
  }
  return findings;
}

function score(counts: Counted[], findings: Finding[]): void {
  let finds = 0;
  let falsePositives = 0;
  let covered = 0;
  let riskLines = 0;
  for (const { file, risk, informative } of counts) {
    const mine = findings.filter((f) => f.file === file);
    const expected = risk + informative;
    finds += Math.min(mine.length, expected);
    falsePositives += Math.max(mine.length - expected, 0);
    riskLines += Math.min(new Set(mine.map((f) => f.line)).size, risk);
    if (mine.length > 0) covered += 1;
    console.log(`${file.padEnd(40)} ${mine.length}/${expected} ${[...new Set(mine.map((f) => f.rule))].join(' ')}`);
  }
  const outside = findings.filter((f) => !counts.some((c) => c.file === f.file));
  for (const f of outside) console.log(`outside the list: ${f.file}:${f.line} ${f.rule}`);
  const expected = counts.reduce((sum, c) => sum + c.risk + c.informative, 0);
  const risk = counts.reduce((sum, c) => sum + c.risk, 0);
  console.log(`\nfiles covered ${covered}/${counts.length}; finds ${finds}/${expected}; false positives ${falsePositives + outside.length}; lines with a finding, up to each file's risk count, ${riskLines}/${risk}`);
}

function compare(label: string, planted: Planted[], findings: Finding[]): { found: number; total: number; unexpected: number } {
  const matches = (p: Planted, f: Finding) => p.file === f.file && p.line === f.line && (p.commit === undefined || f.commit?.startsWith(p.commit));
  let found = 0;
  console.log(`\n## ${label}`);
  for (const p of planted) {
    const hit = findings.find((f) => matches(p, f));
    if (hit) found += 1;
    console.log(`${hit ? 'found ' : 'MISSED'} ${p.commit ? `${p.commit.slice(0, 7)} ` : ''}${p.file}:${p.line} ${p.what}${hit ? ` (${hit.rule})` : ''}`);
  }
  const unexpected = findings.filter((f) => !planted.some((p) => matches(p, f)));
  for (const f of unexpected) console.log(`unexpected ${f.commit ? `${f.commit.slice(0, 7)} ` : ''}${f.file}:${f.line}:${f.column} ${f.rule}`);
  console.log(`${label}: found ${found} of ${planted.length}, ${unexpected.length} unexpected findings`);
  return { found, total: planted.length, unexpected: unexpected.length };
}

async function main(): Promise<void> {
  const [root, expectedFile, option] = process.argv.slice(2);
  if (!root || !expectedFile) throw new Error('usage: secret-recall.ts <tree> <expected.json> [--passwords]');
  // The tool's defaults (include_entropy on), and include_passwords when asked.
  const heuristics: Heuristics = { entropy: true, passwords: option === '--passwords' };
  const expected = JSON.parse(await readFile(expectedFile, 'utf8')) as Expected;
  const [secretlint, gitleaks] = await Promise.all([loadSecretlint(), loadGitleaksRules()]);
  const engines: Engines = { secretlint, gitleaks };

  const started = performance.now();
  const findings = await scanTree(root, engines, heuristics);
  if (expected.counts) {
    score(expected.counts, findings);
    console.log(`${Math.round(performance.now() - started)} ms`);
    return;
  }
  const totals = [compare('files', expected.planted ?? [], findings)];
  for (const repo of expected.history ?? []) {
    const gitdir = await realpath(path.join(root, repo.gitdir));
    const scan = await scanHistory({ gitdir, prefix: repo.prefix, ref: 'HEAD', heuristics, engines, maxFindings: 1_000, signal: new AbortController().signal });
    totals.push(compare(`history of ${repo.gitdir} (${scan.commits} commits, ${scan.blobs} blobs)`, repo.planted, scan.findings));
  }
  const found = totals.reduce((sum, t) => sum + t.found, 0);
  const total = totals.reduce((sum, t) => sum + t.total, 0);
  const unexpected = totals.reduce((sum, t) => sum + t.unexpected, 0);
  console.log(`\nTOTAL: found ${found} of ${total} planted secrets, ${unexpected} unexpected findings, ${Math.round(performance.now() - started)} ms`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
