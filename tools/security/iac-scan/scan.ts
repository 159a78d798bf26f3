/** iac-scan's work: find manifests and Dockerfiles under a workspace path and run the rules. */
import * as path from 'node:path';
import { compareText, countBy, ToolError, type ToolContext } from '@tos/sdk';
import { eachFileText, firstResults, type FileErrors } from '../../shared/scan';
import { scanDockerfile } from './dockerfile';
import { scanManifest } from './kubernetes';
import { IAC_SEVERITIES, type IacFinding, type IacSeverity } from './rules';
import type { IacScanInput, IacScanOutput } from './iac-scan.tool';
import { MAX_ERRORS_LISTED, MAX_FILE_BYTES, MAX_SCANNED_FILES } from './limits';

/** Files a walk may meet (node_modules and .git are never walked). */
const MAX_LISTED_FILES = 20_000;

const DOCKERFILE = /^(?:(?:Docker|Container)file(?:\.[\w.-]+)?|[\w.-]+\.(?:dockerfile|containerfile))$/i;
const YAML = /\.ya?ml$/i;

export async function iacScan(input: IacScanInput, ctx: ToolContext): Promise<IacScanOutput> {
  const listed = await ctx.workspace.listFiles(input.path, { files: input.files, maxFiles: MAX_LISTED_FILES }, 'path');
  const candidates = listed.filter((file) => DOCKERFILE.test(path.posix.basename(file.path)) || YAML.test(file.path));
  if (candidates.length > MAX_SCANNED_FILES) {
    throw ToolError.invalidInput('path', `at most ${MAX_SCANNED_FILES} manifests and Dockerfiles`, input.path, `More than ${MAX_SCANNED_FILES} YAML files and Dockerfiles under '${input.path}'; narrow the path or list files`);
  }
  const skipped = new Set(input.skip_rules ?? []);
  const threshold = IAC_SEVERITIES.indexOf(input.min_severity);
  const found: IacFinding[] = [];
  const errors: FileErrors = [];
  let scanned = 0;
  for await (const { file, text } of eachFileText(ctx, candidates, MAX_FILE_BYTES, errors, 'scanned')) {
    let findings: IacFinding[];
    if (DOCKERFILE.test(path.posix.basename(file.path))) {
      findings = scanDockerfile(file.path, text);
    } else {
      const manifest = scanManifest(file.path, text);
      errors.push(...manifest.errors.map((message) => ({ file: file.path, message })));
      // YAML that is not Kubernetes (CI configs, compose files) is not counted as scanned.
      if (!manifest.kubernetes) continue;
      findings = manifest.findings;
    }
    scanned += 1;
    found.push(...findings.filter((entry) => !skipped.has(entry.rule) && IAC_SEVERITIES.indexOf(entry.severity) <= threshold));
  }
  found.sort((a, b) => IAC_SEVERITIES.indexOf(a.severity) - IAC_SEVERITIES.indexOf(b.severity) || compareText(a.file, b.file) || a.line - b.line || compareText(a.rule, b.rule));
  const { items: findings, ...page } = firstResults(found, input.max_results);
  ctx.progress(100, `${found.length} finding(s) in ${scanned} file(s)`);
  return {
    findings,
    ...page,
    summary: countBy(IAC_SEVERITIES, found, (entry) => entry.severity),
    files_scanned: scanned,
    errors: errors.slice(0, MAX_ERRORS_LISTED),
  };
}
