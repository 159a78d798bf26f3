/**
 * iac-scan's work: find the IaC files under a workspace path, read each through the workspace
 * (which refuses links out of it), hand it to the reader of its format and run the rules.
 * Dockerfiles and YAML/JSON files are judged one by one; Terraform modules and Helm charts are
 * judged whole once their files are read, so their texts are held up to MAX_HELD_BYTES.
 */
import * as path from 'node:path';
import { compareText, countBy, ToolError, type ToolContext, type WorkspaceFile } from '@tos/sdk';
import { eachFileText, firstResults, type FileErrors } from '../../shared/scan';
import { mayBeCloudFormation, scanTemplate } from './cloudformation';
import { isCompose, scanCompose } from './compose';
import { scanDockerfile } from './dockerfile';
import { chartOf, renderChart, type ChartFiles } from './helm';
import { scanManifest } from './kubernetes';
import { IAC_SEVERITIES, type IacFinding } from './rules';
import { scanTerraformModule } from './terraform';
import { parseYamlFile } from './yaml-documents';
import type { IacScanInput, IacScanOutput } from './iac-scan.tool';
import { MAX_ERRORS_LISTED, MAX_FILE_BYTES, MAX_HELD_BYTES, MAX_SCANNED_FILES } from './limits';

/** Files a walk may meet (node_modules and .git are never walked). */
const MAX_LISTED_FILES = 20_000;

const DOCKERFILE = /^(?:(?:Docker|Container)file(?:\.[\w.-]+)?|[\w.-]+\.(?:dockerfile|containerfile))$/i;
const YAML = /\.ya?ml$/i;
/** JSON and `.template` files may be CloudFormation templates (judged by their content)... */
const JSON_TEMPLATE = /\.(?:json|template)$/i;
/** ...but not these, nor any over the size limit (AWS takes templates of at most 1 MB). */
const NOT_TEMPLATE = /(?:^|\/)(?:package|package-lock|npm-shrinkwrap|composer|jsconfig|tsconfig[\w.-]*|\.?eslintrc[\w.-]*)\.json$/i;
const TERRAFORM = /\.tf$/i;

interface Held {
  modules: Map<string, Array<{ path: string; text: string }>>;
  charts: Map<string, ChartFiles>;
  bytes: number;
}

export async function iacScan(input: IacScanInput, ctx: ToolContext): Promise<IacScanOutput> {
  const listed = await ctx.workspace.listFiles(input.path, { files: input.files, maxFiles: MAX_LISTED_FILES }, 'path');
  const chartRoots = new Set(listed.filter((file) => path.posix.basename(file.path) === 'Chart.yaml').map((file) => path.posix.dirname(file.path)));
  const mayBeTemplate = (file: WorkspaceFile) => JSON_TEMPLATE.test(file.path) && !NOT_TEMPLATE.test(file.path) && file.size <= MAX_FILE_BYTES;
  const certain = listed.filter((file) => chartOf(file.path, chartRoots) !== undefined || DOCKERFILE.test(path.posix.basename(file.path)) || YAML.test(file.path) || TERRAFORM.test(file.path));
  if (certain.length > MAX_SCANNED_FILES) {
    throw ToolError.invalidInput('path', `at most ${MAX_SCANNED_FILES} IaC files`, input.path, `More than ${MAX_SCANNED_FILES} YAML, Terraform files and Dockerfiles under '${input.path}'; narrow the path or list files`);
  }
  // JSON is mostly not CloudFormation (locales, fixtures, configs): it fills what is left of the
  // file budget rather than refusing a tree the other formats fit in.
  const templates = listed.filter(mayBeTemplate);
  const candidates = [...certain, ...templates.slice(0, MAX_SCANNED_FILES - certain.length)];
  const errors: FileErrors = [];
  if (candidates.length < certain.length + templates.length) {
    errors.push({ file: input.path, message: `Not scanned: ${certain.length + templates.length - candidates.length} JSON files past the limit of ${MAX_SCANNED_FILES} files per call; narrow the path or list files` });
  }
  const skipped = new Set(input.skip_rules ?? []);
  const threshold = IAC_SEVERITIES.indexOf(input.min_severity);
  const found: IacFinding[] = [];
  const keep = (findings: IacFinding[]) => found.push(...findings.filter((entry) => !skipped.has(entry.rule) && IAC_SEVERITIES.indexOf(entry.severity) <= threshold));
  const held: Held = { modules: new Map(), charts: new Map(), bytes: 0 };
  let scanned = 0;
  for await (const { file, text } of eachFileText(ctx, candidates, MAX_FILE_BYTES, errors, 'scanned')) {
    const chart = chartOf(file.path, chartRoots);
    if (chart !== undefined || TERRAFORM.test(file.path)) {
      if (held.bytes + text.length > MAX_HELD_BYTES) {
        errors.push({ file: file.path, message: `Not scanned: the Terraform modules and Helm charts read so far hold ${MAX_HELD_BYTES} bytes, the most one call reads` });
        continue;
      }
      held.bytes += text.length;
      if (chart !== undefined) {
        const files = held.charts.get(chart) ?? held.charts.set(chart, {}).get(chart)!;
        files[chart === '.' ? file.path : file.path.slice(chart.length + 1)] = text;
      } else {
        const directory = path.posix.dirname(file.path);
        (held.modules.get(directory) ?? held.modules.set(directory, []).get(directory)!).push({ path: file.path, text });
      }
      continue;
    }
    const findings = DOCKERFILE.test(path.posix.basename(file.path)) ? scanDockerfile(file.path, text) : scanDocument(file.path, text, errors);
    if (findings === undefined) continue;
    scanned += 1;
    keep(findings);
  }
  for (const files of held.modules.values()) {
    const module = await scanTerraformModule(files, ctx.signal);
    errors.push(...module.errors);
    scanned += files.length - module.errors.length;
    keep(module.findings);
  }
  for (const [root, files] of held.charts) {
    ctx.signal.throwIfAborted();
    const rendered = renderChart(root, files);
    errors.push(...rendered.errors);
    for (const manifest of rendered.manifests) {
      const scan = scanManifest(manifest.file, manifest.text);
      errors.push(...scan.errors.map((message) => ({ file: manifest.file, message: `Rendered: ${message}` })));
      if (scan.kubernetes) scanned += 1;
      // Back from the rendered text to the template line that wrote it.
      keep(scan.findings.map((entry) => ({ ...entry, line: manifest.lines[entry.line - 1] ?? entry.line })));
    }
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

/**
 * A YAML or JSON file: a CloudFormation template, a Compose file or Kubernetes manifests,
 * told apart by content. Undefined when it is none of them (CI configs, package.json, …).
 */
function scanDocument(file: string, text: string, errors: FileErrors): IacFinding[] | undefined {
  if (mayBeCloudFormation(text)) {
    const template = scanTemplate(file, text);
    errors.push(...template.errors.map((message) => ({ file, message })));
    return template.cloudformation ? template.findings : undefined;
  }
  if (!YAML.test(file)) return undefined;
  if (/^services\s*:/m.test(text) && !/^apiVersion\s*:/m.test(text)) {
    const parsed = parseYamlFile(text);
    const compose = parsed.documents.filter((document) => isCompose(document.root));
    if (compose.length > 0 || parsed.errors.length > 0) {
      errors.push(...parsed.errors.map((message) => ({ file, message })));
      return compose.length > 0 ? compose.flatMap((document) => scanCompose(file, document)) : undefined;
    }
  }
  const manifest = scanManifest(file, text);
  errors.push(...manifest.errors.map((message) => ({ file, message })));
  // YAML that is not Kubernetes (CI configs, …) is not counted as scanned.
  return manifest.kubernetes ? manifest.findings : undefined;
}
