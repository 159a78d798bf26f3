/** sast-scan's work: lint each JavaScript/TypeScript file of a workspace path with the security rules. */
import * as path from 'node:path';
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { compareText, countBy, ToolError, type ToolContext } from '@tos/sdk';
import { eachFileText, firstResults, listSourceFiles, type FileErrors } from '../../shared/scan';
import { PLUGINS } from './plugins';
import { MAX_FILE_BYTES, MAX_SCANNED_FILES, MAX_TAINT_BYTES } from './limits';
import { TaintEngine, type ParsedModule, type TaintFinding } from './taint/engine';
import type { Step } from './taint/model';
import { templateFindings } from './taint/templates';
import { vendoredReason } from './taint/vendored';
import { SAST_RULES, SAST_SEVERITIES, selectRules, type SastSeverity } from './rules';
import { sarifLog, type SarifLog } from './sarif';
import type { SastScanInput, SastScanOutput } from './sast-scan.tool';

const MAX_ERRORS_LISTED = 100;
/** Where the linter believes files live: it never touches the disk, so any absolute root serves. */
const VIRTUAL_ROOT = '/workspace';

/** A finding of either kind: the linter's, or the taint engine's with its path. */
export interface SastFinding extends Omit<TaintFinding, 'rule' | 'flow'> {
  rule: string;
  severity: SastSeverity;
  /** Taint findings: the path from the source to the sink. */
  flow?: Step[];
}

/** `only`: workspace-relative paths to keep (a pull request's files); all sources under path otherwise. */
export async function sastScan(input: SastScanInput, ctx: ToolContext, toolVersion: string, only?: ReadonlySet<string>): Promise<SastScanOutput> {
  const { ids, unknown } = selectRules(input.rules);
  if (unknown.length > 0 || ids.length === 0) {
    throw ToolError.invalidInput('rules', "'recommended', 'strict' or a comma-separated list of rule ids", input.rules, unknown.length > 0 ? `Unknown rule id(s): ${unknown.slice(0, 5).join(', ')}; GET this tool's documentation for the list` : 'No rule named');
  }
  const sources = (await listSourceFiles(ctx, input, MAX_SCANNED_FILES)).filter((file) => !only || only.has(file.path));
  const linter = new Linter({ configType: 'flat', cwd: VIRTUAL_ROOT });
  const threshold = SAST_SEVERITIES.indexOf(input.min_severity);
  const found: SastFinding[] = [];
  const errors: FileErrors = [];
  const skipped: FileErrors = [];
  const taintRules = new Set(ids.filter((id) => id.startsWith('taint/')));
  const eslintRules = ids.filter((id) => !taintRules.has(id));
  const parsed: ParsedModule[] = [];
  let parsedBytes = 0;
  let scanned = 0;
  for await (const { file, text } of eachFileText(ctx, sources, MAX_FILE_BYTES, errors, 'scanned')) {
    const vendored = input.include_vendored ? undefined : vendoredReason(file.path, text);
    if (vendored) {
      skipped.push({ file: file.path, message: `Not scanned: ${vendored} (include_vendored scans it)` });
      continue;
    }
    const { messages, crashed } = lintFile(linter, eslintRules, text, path.posix.join(VIRTUAL_ROOT, file.path));
    if (crashed.length > 0) errors.push({ file: file.path, message: `Scanned without ${crashed.join(', ')}: the rule failed on this file (${crashed.length === 1 ? 'a bug in the rule' : 'bugs in the rules'})` });
    // An error without a rule is the linter's own: a parse error, or a file no config matched. (Its
    // warnings about ignored eslint-disable comments are not: scanned code cannot switch rules off.)
    const own = messages.find((message) => !message.ruleId && message.severity === 2);
    if (own) {
      errors.push({ file: file.path, message: `Not parsed: ${own.message} (line ${own.line}, column ${own.column})` });
      continue;
    }
    scanned += 1;
    if (taintRules.size > 0 && parsedBytes <= MAX_TAINT_BYTES) {
      parsedBytes += text.length;
      const module = parsedBytes <= MAX_TAINT_BYTES ? parsedModule(linter, file.path, text) : undefined;
      if (module) parsed.push(module);
      if (parsedBytes > MAX_TAINT_BYTES) errors.push({ file: file.path, message: `Linted without data-flow analysis from here on: the taint engine holds at most ${MAX_TAINT_BYTES / 1024 / 1024} MiB of source` });
    }
    for (const message of messages) {
      if (!message.ruleId || !(message.ruleId in SAST_RULES)) continue;
      const severity = SAST_RULES[message.ruleId].severity;
      if (SAST_SEVERITIES.indexOf(severity) > threshold) continue;
      found.push({ rule: message.ruleId, severity, file: file.path, line: message.line, column: message.column, end_line: message.endLine ?? message.line, end_column: message.endColumn ?? message.column, message: message.message });
    }
  }
  if (parsed.length > 0) {
    ctx.signal.throwIfAborted();
    ctx.progress(99, `data flow across ${parsed.length} file(s)`);
    const engine = new TaintEngine(parsed);
    const taintFindings = engine.run();
    if (taintRules.has('taint/xss')) taintFindings.push(...(await templateFindings(ctx, input.path, engine.renders)));
    for (const finding of taintFindings) {
      const severity = SAST_RULES[finding.rule].severity;
      if (!taintRules.has(finding.rule) || SAST_SEVERITIES.indexOf(severity) > threshold) continue;
      found.push({ rule: finding.rule, severity, file: finding.file, line: finding.line, column: finding.column, end_line: finding.end_line, end_column: finding.end_column, message: finding.message, flow: finding.flow });
    }
    if (engine.truncated) errors.push({ file: input.path, message: 'Data flow analysed in part: the scan reached its work limit for taint analysis' });
    for (const failure of engine.failed.slice(0, 5)) errors.push({ file: failure.file, message: `Data flow not analysed in part of this file (an engine error: ${failure.message}); its ESLint findings are complete` });
  }
  found.sort((a, b) => SAST_SEVERITIES.indexOf(a.severity) - SAST_SEVERITIES.indexOf(b.severity) || compareText(a.file, b.file) || a.line - b.line || a.column - b.column || compareText(a.rule, b.rule));
  const { items: findings, ...page } = firstResults(found, input.max_results);
  ctx.progress(100, `${found.length} finding(s) in ${scanned} file(s)`);
  return {
    findings,
    ...page,
    summary: countBy(SAST_SEVERITIES, found, (entry) => entry.severity),
    files_scanned: scanned,
    rules: ids,
    errors: errors.slice(0, MAX_ERRORS_LISTED),
    ...(skipped.length > 0 && { skipped: skipped.slice(0, MAX_ERRORS_LISTED) }),
    ...(input.sarif && { sarif: sarifLog(found, ids, toolVersion) }),
  };
}

/** The syntax tree and scopes ESLint just built, kept for the taint engine (it links calls across files at the end); none if it built none. */
function parsedModule(linter: Linter, file: string, text: string): ParsedModule | undefined {
  const source = linter.getSourceCode() as ReturnType<Linter['getSourceCode']> | null;
  return source ? { file, text, ast: source.ast as unknown as ParsedModule['ast'], scopes: source.scopeManager.scopes as unknown as ParsedModule['scopes'] } : undefined;
}

/**
 * The linter's messages for one file. The linter reads nothing itself: it gets the text read
 * through the workspace sandbox. A third-party rule that throws on some code (as SDL's
 * no-insecure-random does on `require(name)`) would end the whole scan: the file is linted again
 * without it, and the rule is named so the caller knows what was not checked there.
 */
function lintFile(linter: Linter, ids: string[], text: string, filename: string): { messages: Linter.LintMessage[]; crashed: string[] } {
  const crashed: string[] = [];
  for (;;) {
    try {
      return { messages: linter.verify(text, flatConfig(ids.filter((id) => !crashed.includes(id))), { filename }), crashed };
    } catch (error) {
      const rule = (error as { ruleId?: unknown }).ruleId;
      if (typeof rule !== 'string' || crashed.includes(rule)) throw error;
      crashed.push(rule);
    }
  }
}

/** Every source type parsed by typescript-eslint's parser (JSX on), without type information. */
function flatConfig(ids: string[]): Linter.Config[] {
  return [
    {
      files: ['**/*.{js,jsx,mjs,cjs,ts,tsx,mts,cts}'],
      plugins: PLUGINS,
      languageOptions: { parser: tseslint.parser as Linter.Parser, ecmaVersion: 'latest', sourceType: 'module', parserOptions: { ecmaFeatures: { jsx: true } } },
      linterOptions: { reportUnusedDisableDirectives: 'off', noInlineConfig: true },
      rules: Object.fromEntries(ids.map((id) => [id, 'error'])),
    },
  ];
}
