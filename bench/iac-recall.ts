/**
 * iac-scan's recall on bridgecrewio's vulnerable-by-design trees: runs the tool on a tree given on
 * the command line (fetches nothing) and says, for every resource the tree's README documents as
 * misconfigured (bench/iac/<name>-expected.json), whether at least one finding names it.
 *
 *   npx ts-node --transpile-only bench/iac-recall.ts /tmp/terragoat [terragoat|cfngoat] [runs]
 *
 * Prints one line per expected resource, the findings per rule, and the median and spread of the
 * scan's wall time over `runs` calls (default 5). Exits 1 when a documented resource has no finding.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { runTool } from '@tos/sdk/testing';
import { IacScanTool, type IacScanOutput } from '../tools/security/iac-scan/iac-scan.tool';

interface Expected {
  file: string;
  resource: string;
  checkov: string[];
}

async function main(): Promise<void> {
  const [tree, name = 'terragoat', runsArgument = '5'] = process.argv.slice(2);
  if (!tree) throw new Error('usage: bench/iac-recall.ts <tree> [terragoat|cfngoat] [runs]');
  const { path: scanned, resources: expected } = JSON.parse(readFileSync(path.join(__dirname, `iac/${name}-expected.json`), 'utf8')) as { path: string; resources: Expected[] };
  const times: number[] = [];
  let output: IacScanOutput | undefined;
  for (let run = 0; run < Number(runsArgument); run += 1) {
    const started = process.hrtime.bigint();
    output = await runTool<IacScanOutput>(IacScanTool, { path: scanned, max_results: 1000 }, { workspaceRoot: path.resolve(tree) });
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  const result = output!;
  if (result.truncated) console.warn(`warning: ${result.total} findings, only ${result.count} listed; recall is counted on those`);

  let found = 0;
  for (const resource of expected) {
    // Checkov names a provider configuration `aws.alias`, a data source `type.name` and a
    // CloudFormation resource `AWS::S3::Bucket.Logs`; iac-scan says `provider.aws.alias`,
    // `data.type.name` (as Terraform does) and `Logs (AWS::S3::Bucket)`.
    const cloudformation = /^(AWS::\w+::\w+)\.(.+)$/.exec(resource.resource);
    const names = [resource.resource, `provider.${resource.resource}`, `data.${resource.resource}`, ...(cloudformation ? [`${cloudformation[2]} (${cloudformation[1]})`] : [])];
    const rules = result.findings.filter((entry) => entry.file === resource.file && names.includes(entry.object)).map((entry) => entry.rule);
    if (rules.length > 0) found += 1;
    console.log(`${rules.length > 0 ? 'found  ' : 'MISSED '} ${resource.file} ${resource.resource}  checkov ${resource.checkov.length}, ours ${rules.length}: ${[...new Set(rules)].join(' ')}`);
  }
  const perRule = new Map<string, number>();
  for (const entry of result.findings) perRule.set(entry.rule, (perRule.get(entry.rule) ?? 0) + 1);
  console.log('\nfindings per rule:');
  for (const [rule, count] of [...perRule].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) console.log(`  ${String(count).padStart(4)} ${rule}`);
  const sorted = [...times].sort((a, b) => a - b);
  console.log(`\nresources with a finding: ${found} of ${expected.length}`);
  console.log(`findings: ${result.total} (${JSON.stringify(result.summary)}), rules that fired: ${perRule.size}, files scanned: ${result.files_scanned}, errors: ${result.errors.length}`);
  for (const error of result.errors) console.log(`  error ${error.file}: ${error.message}`);
  console.log(`wall time over ${times.length} runs: median ${sorted[Math.floor(sorted.length / 2)].toFixed(0)} ms, min ${sorted[0].toFixed(0)}, max ${sorted[sorted.length - 1].toFixed(0)}`);
  if (found < expected.length) process.exitCode = 1;
}

void main();
