import '@microsoft/jest-sarif';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTool } from '@tos/sdk/testing';
import { startForge, stopForge } from '../../../test/support/forge';
import { buildCodeWorkspace } from '../../../test/support/code-tools/workspace';
import { SastScanTool } from './sast-scan.tool';
import { SAST_RULE_IDS, SAST_RULES } from './rules';
import type { SastScanOutput } from './sast-scan.tool';

let root: string;
beforeAll(() => (root = buildCodeWorkspace(mkdtempSync(path.join(tmpdir(), 'sast-scan-')))));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const scan = (input: Record<string, unknown>, signal?: AbortSignal, onProgress?: () => void) =>
  runTool<SastScanOutput>(SastScanTool, input, { workspaceRoot: root, signal, onProgress });

function folder(name: string, files: Record<string, string>): string {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name, file)), { recursive: true });
    writeFileSync(path.join(root, name, file), text);
  }
  return name;
}

const where = (output: SastScanOutput) => output.findings.map((finding) => `${finding.rule} ${path.posix.basename(finding.file)}:${finding.line}`);

describe('SastScanTool', () => {
  it('finds the planted bugs in JavaScript and TypeScript, worst first, and nothing in the clean JSX', async () => {
    const output = await scan({ path: 'code/sast' });
    expect(where(output)).toEqual([
      'taint/command-injection server.js:10',
      'security/detect-eval-with-expression server.js:14',
      'taint/code-injection server.js:14',
      'security/detect-child-process server.js:10',
      'no-eval server.js:14',
      'taint/path-traversal server.js:18',
      '@microsoft/sdl/no-inner-html render.ts:2',
      'no-unsanitized/property render.ts:2',
      '@microsoft/sdl/no-document-write render.ts:6',
      'no-unsanitized/method render.ts:6',
      '@microsoft/sdl/no-inner-html render.ts:7',
      'no-unsanitized/method render.ts:7',
      'security/detect-non-literal-fs-filename server.js:18',
      'security/detect-non-literal-regexp server.js:22',
      'taint/redos server.js:22',
      'security/detect-unsafe-regex server.js:27',
      '@microsoft/sdl/no-insecure-random server.js:31',
      'security/detect-pseudoRandomBytes server.js:31',
      '@microsoft/sdl/no-postmessage-star-origin render.ts:11',
      '@microsoft/sdl/no-unsafe-alloc render.ts:15',
      '@microsoft/sdl/no-insecure-random render.ts:19',
      'security/detect-possible-timing-attacks server.js:35',
    ]);
    expect(output).toMatchObject({ files_scanned: 3, errors: [], summary: { critical: 3, high: 9, medium: 9, low: 1 } });
    expect(output.findings.find((finding) => finding.rule === 'security/detect-child-process')).toMatchObject({ severity: 'high', line: 10, column: 3, end_line: 10, message: expect.stringContaining('child_process.exec()') });
    expect(output.findings[0].flow).toEqual([
      { file: 'code/sast/src/server.js', line: 10, column: 17, note: 'source: req.query.file' },
      { file: 'code/sast/src/server.js', line: 10, column: 3, note: 'sink: child_process.exec()' },
    ]);
    expect(output.rules).toEqual(SAST_RULE_IDS.filter((id) => SAST_RULES[id].recommended));
  });

  it('writes a SARIF 2.1.0 log that validates against the SARIF schema', async () => {
    const output = await scan({ path: 'code/sast', rules: 'strict', sarif: true, max_results: 1 });
    expect(output.sarif).toBeValidSarifLog();
    expect({ version: '2.1.0', runs: [{ results: [] }] }).not.toBeValidSarifLog(); // the matcher can fail: a run needs its tool
    const run = (output.sarif as { runs: Array<{ results: Array<{ ruleId: string; level: string; ruleIndex: number }>; tool: { driver: { rules: Array<{ id: string; helpUri?: string; properties: { tags: string[] } }> } } }> }).runs[0];
    // The log holds every finding, not only the first max_results.
    expect(run.results).toHaveLength(output.total);
    expect(output.findings).toHaveLength(1);
    expect(run.tool.driver.rules.map((rule) => rule.id)).toEqual(SAST_RULE_IDS);
    for (const result of run.results) expect(run.tool.driver.rules[result.ruleIndex].id).toBe(result.ruleId);
    expect(run.results.find((result) => result.ruleId === 'security/detect-eval-with-expression')?.level).toBe('error');
    expect(run.tool.driver.rules.find((rule) => rule.id === 'no-unsanitized/property')).toMatchObject({ helpUri: expect.stringMatching(/^https:\/\//), properties: { tags: ['security', 'external/cwe/cwe-79'] } });
    // A taint finding's path is its code flow: source, then sink, each a physical location.
    const taint = run.results.find((result) => result.ruleId === 'taint/command-injection') as unknown as { codeFlows: Array<{ threadFlows: Array<{ locations: Array<{ location: { physicalLocation: { region: { startLine: number } }; message: { text: string } } }> }> }> };
    expect(taint.codeFlows[0].threadFlows[0].locations.map(({ location }) => `${location.physicalLocation.region.startLine} ${location.message.text}`)).toEqual(['10 source: req.query.file', '10 sink: child_process.exec()']);
    expect(run.tool.driver.rules.find((rule) => rule.id === 'taint/command-injection')).toMatchObject({ properties: { tags: ['security', 'external/cwe/cwe-78'] } });
  });

  it('runs the rules named, strict adds the noisy ones, and min_severity filters', async () => {
    const named = await scan({ path: 'code/sast', rules: 'no-eval , security/detect-child-process' });
    expect(where(named)).toEqual(['security/detect-child-process server.js:10', 'no-eval server.js:14']);
    const code = folder('noisy', { 'lookup.js': "const table = {};\nfunction get(key) {\n  return table[key];\n}\nfetch('http://example.test/data');\nmodule.exports = get;\n" });
    expect((await scan({ path: code })).total).toBe(0);
    expect(where(await scan({ path: code, rules: 'strict' }))).toEqual(['security/detect-object-injection lookup.js:3', '@microsoft/sdl/no-insecure-url lookup.js:5']);
    const high = await scan({ path: 'code/sast', min_severity: 'high' });
    expect(high.summary).toEqual({ critical: 3, high: 9, medium: 0, low: 0 });
  });

  it('ignores eslint-disable comments in scanned code', async () => {
    const code = folder('sneaky', { 'a.js': '// eslint-disable-next-line no-eval\neval(process.argv[2]);\n' });
    expect(where(await scan({ path: code }))).toEqual(['security/detect-eval-with-expression a.js:2', 'taint/code-injection a.js:2', 'no-eval a.js:2']);
  });

  it('scans a file again without a rule that crashes on it, and says so', async () => {
    // SDL's no-insecure-random throws on require() of a variable; the other rules still report.
    const code = folder('crash', { 'plugin.js': 'const name = process.argv[2];\nmodule.exports = require(name);\neval(name);\n' });
    const output = await scan({ path: code });
    expect(where(output)).toEqual(['security/detect-eval-with-expression plugin.js:3', 'taint/code-injection plugin.js:3', 'security/detect-non-literal-require plugin.js:2', 'no-eval plugin.js:3']);
    expect(output.errors).toEqual([{ file: 'crash/plugin.js', message: expect.stringContaining('@microsoft/sdl/no-insecure-random') }]);
    expect(output.files_scanned).toBe(1);
  });

  it('scans only the files a pull request adds or changes, as the forge lists them', async () => {
    // acme/widgets#1 in the loopback forge changes src/webhooks/client.ts, src/webhooks/backoff.ts and test/webhooks/client.spec.ts.
    const forge = await startForge();
    const repository = mkdtempSync(path.join(tmpdir(), 'sast-pr-'));
    const write = (file: string, text: string) => {
      mkdirSync(path.dirname(path.join(repository, file)), { recursive: true });
      writeFileSync(path.join(repository, file), text);
    };
    write('src/webhooks/client.ts', 'export const run = (code: string) => eval(code);\n');
    write('src/webhooks/backoff.ts', 'export const jitter = () => Math.random();\n');
    write('src/render.ts', 'export const show = (el: HTMLElement, html: string) => { el.innerHTML = html; };\n');
    try {
      const viaPr = (input: Record<string, unknown>, config = forge.config) => runTool<SastScanOutput>(SastScanTool, { rules: 'recommended', ...input }, { workspaceRoot: repository, config });
      const output = await viaPr({ pr: 1, owner: 'acme', repo: 'widgets' });
      expect(new Set(output.findings.map((finding) => finding.file))).toEqual(new Set(['src/webhooks/client.ts', 'src/webhooks/backoff.ts']));
      expect(output).toMatchObject({ files_scanned: 2, pull_request: { number: 1, changed_files: 3 } });
      expect((await viaPr({})).files_scanned).toBe(3); // without pr, everything under path

      await expect(viaPr({ pr: 1 })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'owner' } });
      await expect(viaPr({ pr: 999, owner: 'acme', repo: 'widgets' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'pr' } });
      await stopForge(forge);
      await expect(viaPr({ pr: 1, owner: 'acme', repo: 'widgets' })).rejects.toMatchObject({ code: 'TOOL_ERROR', retryable: true });
    } finally {
      await stopForge(forge).catch(() => undefined);
      rmSync(repository, { recursive: true, force: true });
    }
  });

  it('lists a file that does not parse and scans the rest', async () => {
    const code = folder('broken', { 'bad.ts': 'export function (', 'ok.js': 'eval(window.name);\n' });
    const output = await scan({ path: code });
    expect(output.errors).toEqual([{ file: 'broken/bad.ts', message: expect.stringMatching(/^Not parsed: .*\(line 1, column \d+\)$/) }]);
    expect(output).toMatchObject({ files_scanned: 1, total: 2 });
  });

  it('refuses bad input naming the parameter', async () => {
    await expect(scan({ path: 'code/sast', rules: 'no-eval,security/no-such-rule' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'rules' }, message: expect.stringContaining('security/no-such-rule') });
    await expect(scan({ path: 'code/sast', rules: ' , ' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'rules' } });
    await expect(scan({ path: '/etc' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path' } });
    await expect(scan({ path: 'code/sast', files: ['../../../etc/passwd'] })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'files' } });
    await expect(scan({ path: 'code/sast', min_severity: 'severe' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'min_severity' } });
  });

  it("scans this repository's own sources, bounded, in a stable shape", async () => {
    const output = await runTool<SastScanOutput>(SastScanTool, { path: 'src', rules: 'strict', max_results: 50 }, { workspaceRoot: path.resolve(__dirname, '../../..') });
    expect(output.files_scanned).toBeGreaterThan(100);
    expect(output.count).toBe(Math.min(50, output.total));
    expect(output.truncated).toBe(output.total > 50);
    expect(Object.values(output.summary).reduce((sum, value) => sum + value, 0)).toBe(output.total);
    // Taint findings add their path (flow); every other member is there for every finding.
    for (const finding of output.findings) expect(Object.keys(finding).sort()).toEqual(['column', 'end_column', 'end_line', 'file', ...(finding.rule.startsWith('taint/') ? ['flow'] : []), 'line', 'message', 'rule', 'severity']);
  }, 60_000);

  it('stops when cancelled between files', async () => {
    const many = path.join(root, 'many');
    mkdirSync(many);
    for (let index = 0; index < 100; index += 1) copyFileSync(path.join(root, 'code/sast/src/server.js'), path.join(many, `copy-${index}.js`));
    const controller = new AbortController();
    let calls = 0;
    const running = scan({ path: 'many' }, controller.signal, () => {
      calls += 1;
      if (calls === 2) controller.abort(new Error('cancelled'));
    });
    await expect(running).rejects.toThrow('cancelled');
    expect(calls).toBe(2);
  });
});
