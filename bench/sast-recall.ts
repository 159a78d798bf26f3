/**
 * sast-scan's recall, precision and speed on public vulnerable apps, against the flaws their own
 * documentation places on a line of code (bench/sast/expected.json). Fetches nothing: it reads the
 * trees given on the command line (see bench/README.md for how to export them).
 *
 *   npx ts-node --transpile-only bench/sast-recall.ts nodegoat=/tmp/nodegoat dvna=/tmp/dvna [--runs 5]
 *
 * A tree named other than in expected.json (`self=src`) is measured for speed only.
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

/** Wall time, and this process's CPU time (the scan runs in process): on a shared machine the CPU time says more. */
async function scan(root: string, rules: string[]): Promise<{ output: SastScanOutput; seconds: number; cpuSeconds: number }> {
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  const output = await runTool<SastScanOutput>(SastScanTool, { path: '.', rules: rules.join(','), max_results: 1000 }, { workspaceRoot: root });
  const used = process.cpuUsage(cpu);
  return { output, seconds: Number(process.hrtime.bigint() - started) / 1e9, cpuSeconds: (used.user + used.system) / 1e6 };
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
    const { output } = await scan(root, RECOMMENDED);
    // A tree with no expected flaws (any other name) is measured for speed only.
    const expected = EXPECTED[name] ?? { source: 'none', flaws: [] };
    const findings = output.findings;
    const found = expected.flaws.filter((flaw) => findings.some((finding) => onFlaw(finding, [flaw])));
    const unmatched = findings.filter((finding) => !onFlaw(finding, expected.flaws));
    const taint = findings.filter((finding) => finding.rule.startsWith('taint/'));
    console.log(`\n== ${name} (${root}): ${output.files_scanned} files scanned, ${output.skipped?.length ?? 0} skipped as vendored/minified`);
    for (const entry of output.skipped ?? []) console.log(`   skipped ${entry.file}: ${entry.message}`);
    if (expected.flaws.length > 0) console.log(`documented flaws found: ${found.length} of ${expected.flaws.length}`);
    for (const flaw of expected.flaws) {
      const hits = findings.filter((finding) => onFlaw(finding, [flaw])).map((finding) => `${finding.rule}@${finding.line}`);
      console.log(`   ${hits.length > 0 ? 'found ' : 'MISSED'} ${flaw.id} (${flaw.file}:${flaw.lines.join('/')}) ${hits.join(' ')}`);
    }
    console.log(`findings: ${findings.length} (taint ${taint.length}); on no documented line: ${unmatched.length} (${Math.round((unmatched.length / Math.max(findings.length, 1)) * 100)} %), taint ones ${unmatched.filter((finding) => finding.rule.startsWith('taint/')).length}`);
    if (expected.flaws.length > 0) for (const finding of unmatched) console.log(`   ${finding.rule} ${finding.file}:${finding.line} ${finding.message.slice(0, 110)}`);

    const sources = (readdirSync(root, { recursive: true }) as string[]).filter((file) => /\.(?:[cm]?[jt]s|[jt]sx)$/.test(file) && !/(?:\.d\.[cm]?ts|\.min\.js)$/.test(file) && !/(?:^|\/)(?:node_modules|\.git)\//.test(file));
    const lines = linesScanned(root, output, sources);
    const sets = { eslint: ESLINT_ONLY, 'eslint+taint': RECOMMENDED };
    const times = { eslint: { wall: [] as number[], cpu: [] as number[] }, 'eslint+taint': { wall: [] as number[], cpu: [] as number[] } };
    for (let run = 0; run < runs; run += 1) {
      // Alternating, so drift on a shared machine hits both alike.
      for (const label of ['eslint', 'eslint+taint'] as const) {
        const { seconds, cpuSeconds } = await scan(root, sets[label]);
        times[label].wall.push(seconds);
        times[label].cpu.push(cpuSeconds);
      }
    }
    for (const [label, { wall, cpu }] of Object.entries(times)) {
      const rate = (seconds: number[]) => seconds.map((value) => lines / value);
      const spread = (rates: number[]) => `${Math.round(Math.min(...rates))}–${Math.round(Math.max(...rates))}`;
      console.log(`${label}: ${lines} lines; wall median ${Math.round(median(rate(wall)))} lines/s (runs ${spread(rate(wall))}); CPU median ${Math.round(median(rate(cpu)))} lines/s (runs ${spread(rate(cpu))}); n=${runs}`);
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
