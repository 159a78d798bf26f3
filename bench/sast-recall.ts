/**
 * sast-scan's recall, precision and speed on public vulnerable apps, against the flaws their own
 * documentation places on a line of code (bench/sast/expected.json). Fetches nothing: it reads the
 * trees given on the command line (see bench/README.md for how to export them).
 *
 *   npx ts-node --transpile-only bench/sast-recall.ts nodegoat=/tmp/nodegoat dvna=/tmp/dvna [--runs 5]
 *
 * Per tree: which documented flaws a finding lands on (same file, one of the flaw's lines), the
 * findings on no documented line (each printed, to be judged), and lines/s over alternating runs
 * of the ESLint rules alone and of ESLint plus the taint engine (medians and spreads).
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { runTool } from '@tos/sdk/testing';
import { SastScanTool, type SastScanOutput } from '../tools/security/sast-scan/sast-scan.tool';
import { SAST_RULE_IDS, SAST_RULES } from '../tools/security/sast-scan/rules';

interface Flaw {
  id: string;
  file: string;
  lines: number[];
}
type Finding = SastScanOutput['findings'][number];

const EXPECTED = JSON.parse(readFileSync(path.join(__dirname, 'sast/expected.json'), 'utf8')) as Record<string, { source: string; flaws: Flaw[] }>;
const RECOMMENDED = SAST_RULE_IDS.filter((id) => SAST_RULES[id].recommended);
const ESLINT_ONLY = RECOMMENDED.filter((id) => !id.startsWith('taint/'));

async function scan(root: string, rules: string[]): Promise<{ output: SastScanOutput; seconds: number }> {
  const started = process.hrtime.bigint();
  const output = await runTool<SastScanOutput>(SastScanTool, { path: '.', rules: rules.join(','), max_results: 1000 }, { workspaceRoot: root });
  return { output, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

/** Lines of the files a scan read (its findings' files are a subset; the walk is the tool's). */
function linesScanned(root: string, output: SastScanOutput, files: string[]): number {
  const skipped = new Set((output.skipped ?? []).map((entry) => entry.file));
  return files.filter((file) => !skipped.has(file)).reduce((sum, file) => sum + readFileSync(path.join(root, file), 'utf8').split('\n').length, 0);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function onFlaw(finding: Finding, flaws: Flaw[]): Flaw | undefined {
  return flaws.find((flaw) => flaw.file === finding.file && flaw.lines.includes(finding.line));
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const runsAt = args.indexOf('--runs');
  const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 5;
  const trees = args.filter((arg, index) => arg.includes('=') && index !== runsAt + 1).map((arg) => arg.split('=') as [string, string]);
  if (trees.length === 0) throw new Error('usage: bench/sast-recall.ts nodegoat=<dir> [dvna=<dir>] [--runs N]');
  for (const [name, root] of trees) {
    const expected = EXPECTED[name];
    if (!expected) throw new Error(`No expected flaws for '${name}' in bench/sast/expected.json (${Object.keys(EXPECTED).join(', ')})`);
    const { output } = await scan(root, RECOMMENDED);
    const findings = output.findings;
    const found = expected.flaws.filter((flaw) => findings.some((finding) => onFlaw(finding, [flaw])));
    const unmatched = findings.filter((finding) => !onFlaw(finding, expected.flaws));
    const taint = findings.filter((finding) => finding.rule.startsWith('taint/'));
    console.log(`\n== ${name} (${root}): ${output.files_scanned} files scanned, ${output.skipped?.length ?? 0} skipped as vendored/minified`);
    for (const entry of output.skipped ?? []) console.log(`   skipped ${entry.file}: ${entry.message}`);
    console.log(`documented flaws found: ${found.length} of ${expected.flaws.length}`);
    for (const flaw of expected.flaws) {
      const hits = findings.filter((finding) => onFlaw(finding, [flaw])).map((finding) => `${finding.rule}@${finding.line}`);
      console.log(`   ${hits.length > 0 ? 'found ' : 'MISSED'} ${flaw.id} (${flaw.file}:${flaw.lines.join('/')}) ${hits.join(' ')}`);
    }
    console.log(`findings: ${findings.length} (taint ${taint.length}); on no documented line: ${unmatched.length} (${Math.round((unmatched.length / Math.max(findings.length, 1)) * 100)} %), taint ones ${unmatched.filter((finding) => finding.rule.startsWith('taint/')).length}`);
    for (const finding of unmatched) console.log(`   ${finding.rule} ${finding.file}:${finding.line} ${finding.message.slice(0, 110)}`);

    const sources = (readdirSync(root, { recursive: true }) as string[]).filter((file) => /\.(?:[cm]?[jt]s|[jt]sx)$/.test(file) && !/(?:\.d\.[cm]?ts|\.min\.js)$/.test(file) && !/(?:^|\/)(?:node_modules|\.git)\//.test(file));
    const lines = linesScanned(root, output, sources);
    const times: Record<'eslint' | 'eslint+taint', number[]> = { eslint: [], 'eslint+taint': [] };
    for (let run = 0; run < runs; run += 1) {
      // Alternating, so drift on a shared machine hits both alike.
      times.eslint.push((await scan(root, ESLINT_ONLY)).seconds);
      times['eslint+taint'].push((await scan(root, RECOMMENDED)).seconds);
    }
    for (const [label, seconds] of Object.entries(times)) {
      const rates = seconds.map((value) => lines / value);
      console.log(`${label}: ${lines} lines, median ${median(seconds).toFixed(3)} s = ${Math.round(median(rates))} lines/s (runs ${Math.round(Math.min(...rates))}–${Math.round(Math.max(...rates))} lines/s, n=${runs})`);
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
