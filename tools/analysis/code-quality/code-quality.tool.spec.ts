import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTool } from '@tos/sdk/testing';
import { Linter } from 'eslint';
import { buildCodeWorkspace } from '../../../test/support/code-tools/workspace';
import { CodeQualityTool } from './code-quality.tool';
import type { CodeQualityOutput } from './code-quality.tool';

let root: string;
beforeAll(() => (root = buildCodeWorkspace(mkdtempSync(path.join(tmpdir(), 'code-quality-')))));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const measure = (input: Record<string, unknown>, signal?: AbortSignal, onProgress?: () => void) =>
  runTool<CodeQualityOutput>(CodeQualityTool, input, { workspaceRoot: root, signal, onProgress });

function folder(name: string, files: Record<string, string>): string {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name, file)), { recursive: true });
    writeFileSync(path.join(root, name, file), text);
  }
  return name;
}

const complexity = (output: CodeQualityOutput) => Object.fromEntries(output.functions.map((fn) => [fn.name, [fn.cyclomatic, fn.cognitive]]));

describe('CodeQualityTool', () => {
  it('counts cyclomatic and cognitive complexity as ESLint and SonarSource define them', async () => {
    const output = await measure({ path: 'code/quality/src' });
    expect(complexity(output)).toMatchObject({
      sumOfPrimes: [4, 7], // loops nest: 1 + 2 + 3, and the labelled continue
      getWords: [4, 1], // a switch is one break in flow however many cases
      shippingCost: [7, 7], // ||, else if, && && (one run), else, a nested ternary (+2)
      exportCsv: [5, 9],
      formatEuro: [1, 0],
      constructor: [2, 0], // a default value is a branch
      slug: [1, 0],
      billable: [1, 0],
    });
    // A callback is a function of its own, not part of the one that holds it.
    expect(output.functions.find((fn) => fn.name.startsWith('(anonymous'))).toMatchObject({ file: 'code/quality/src/shipping.ts', line: 19, cyclomatic: 2, cognitive: 1 });
    expect(output.functions[0]).toMatchObject({ name: 'exportCsv', line: 3, end_line: 16, lines: 14, parameters: 1 });
  });

  it("counts each optional link (a?.b, f?.()) as ESLint's complexity rule does, function by function", async () => {
    const source = [
      'export function plan(order, a) {',
      '  const city = order?.customer?.address?.city;',
      "  const first = order.items?.[0]?.sku ?? 'none';",
      '  order.notify?.(city);',
      '  const total = order.items?.map((item) => item?.price).reduce((sum, price) => sum + price, 0);',
      '  return a?.b.c.d?.e ? first : total;',
      '}',
      "export const label = (user) => user?.profile?.name?.trim?.() || 'anon';",
      'export class Cart {',
      '  total(items = []) {',
      '    return items?.length ?? 0;',
      '  }',
      '}',
      'export function plain(x) {',
      '  return x.y.z();',
      '}',
      '',
    ].join('\n');
    const output = await measure({ path: folder('optional-chaining', { 'chains.js': source }) });
    const ours = Object.fromEntries(output.functions.map((fn) => [fn.line, fn.cyclomatic]));
    // ESLint 9's complexity rule, every function reported (threshold 0), keyed by the line it starts on.
    const eslint = Object.fromEntries(
      new Linter().verify(source, [{ rules: { complexity: ['error', 0] } }], 'chains.js').map((message) => [message.line, Number(/complexity of (\d+)/.exec(message.message)![1])]),
    );
    expect(Object.keys(eslint)).toHaveLength(5);
    expect(ours).toEqual(eslint);
    expect(ours[1]).toBe(12); // 1 + seven ?. links + ?? + ?: … as ESLint counts them
    expect(ours[14]).toBe(1);
  });

  it('finds the copied block in both files and grades them down for it', async () => {
    const output = await measure({ path: 'code/quality' });
    expect(output.clones).toEqual([
      { lines: 9, a: { file: 'code/quality/src/orders/export-csv.ts', start_line: 4, end_line: 12 }, b: { file: 'code/quality/src/orders/export-tsv.ts', start_line: 4, end_line: 12 } },
    ]);
    const grades = Object.fromEntries(output.files.map((file) => [path.posix.basename(file.file), [file.grade, file.duplicated_lines]]));
    expect(grades).toEqual({ 'export-csv.ts': ['C', 9], 'export-tsv.ts': ['C', 9], 'primes.ts': ['B', 0], 'shipping.ts': ['B', 0], 'format.js': ['A', 0] });
    expect(output.summary).toMatchObject({ files: 5, functions: 10, duplicated_lines: 18, grade: 'C', grades: { A: 1, B: 2, C: 2, D: 0, F: 0 } });
    expect(output.summary.duplication_percent).toBeCloseTo((18 / output.summary.sloc!) * 100, 1);

    const alone = await measure({ path: 'code/quality/src/orders', files: ['export-csv.ts'] });
    expect(alone).toMatchObject({ clones: [], files: [{ grade: 'B', duplicated_lines: 0 }] });
  });

  it('grades a file with one very complex function down, and a long file of small functions not', async () => {
    const branches = Array.from({ length: 12 }, (_, index) => `    if (value > ${index}) {\n      for (const item of items) {\n        if (item === ${index} && flag) total += item;\n      }\n    }`).join('\n');
    const small = Array.from({ length: 60 }, (_, index) => `export function add${index}(a: number, b: number): number {\n  return a + b + ${index};\n}\n`).join('\n');
    const name = folder('grading', { 'tangled.ts': `export function tangled(value: number, items: number[], flag: boolean): number {\n  let total = 0;\n  {\n${branches}\n  }\n  return total;\n}\n`, 'many.ts': small });
    const output = await measure({ path: name });
    const tangled = output.files.find((file) => file.file.endsWith('tangled.ts'));
    expect(tangled?.cognitive.max).toBeGreaterThan(15);
    expect(['D', 'F']).toContain(tangled?.grade);
    expect(output.files.find((file) => file.file.endsWith('many.ts'))).toMatchObject({ grade: 'A', functions: 60 });
  });

  it('lists a file that does not parse and measures the rest; bounds every list', async () => {
    const name = folder('broken', { 'bad.ts': 'export function (', 'ok.js': 'module.exports = (a) => a;\n' });
    const output = await measure({ path: name });
    expect(output.errors).toEqual([{ file: 'broken/bad.ts', message: expect.stringMatching(/^Not parsed: /) }]);
    expect(output.summary.files).toBe(1);
    const capped = await measure({ path: 'code/quality', max_files: 1, max_functions: 2, max_clones: 0 });
    expect(capped).toMatchObject({ files_truncated: 4, functions_truncated: 8, clones: [], clones_truncated: 1 });
  });

  it('refuses bad input naming the parameter', async () => {
    await expect(measure({ path: '/etc' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path' } });
    await expect(measure({ path: 'code/quality', files: ['../../../etc/passwd'] })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'files' } });
    await expect(measure({ path: 'code/reports' })).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('No .js/.jsx/.mjs/.cjs/.ts/.tsx/.mts/.cts files') });
    await expect(measure({ path: folder('only-broken', { 'x.ts': 'class {' }) })).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('could be parsed') });
    await expect(measure({ path: 'code/quality', min_clone_lines: 1 })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'min_clone_lines' } });
  });

  it("measures this repository's own sources, bounded, in a stable shape", async () => {
    const output = await runTool<CodeQualityOutput>(CodeQualityTool, { path: 'src' }, { workspaceRoot: path.resolve(__dirname, '../../..') });
    expect(output.summary.files).toBeGreaterThan(100);
    expect(output.summary.functions).toBeGreaterThan(500);
    expect(output.files).toHaveLength(50);
    expect(output.files_truncated).toBe(output.summary.files! - 50);
    expect(output.functions).toHaveLength(20);
    expect(Object.values(output.summary.grades!).reduce((sum, value) => sum + value, 0)).toBe(output.summary.files);
    expect(output.errors).toEqual([]);
    // Over 400 files parsed and compared: about 20 s on a machine also running other suites, longer on a crowded one.
  }, 180_000);

  it('stops when cancelled between files', async () => {
    const many = path.join(root, 'many');
    mkdirSync(many);
    for (let index = 0; index < 100; index += 1) copyFileSync(path.join(root, 'code/quality/src/shipping.ts'), path.join(many, `copy-${index}.ts`));
    const controller = new AbortController();
    let calls = 0;
    const running = measure({ path: 'many' }, controller.signal, () => {
      calls += 1;
      if (calls === 2) controller.abort(new Error('cancelled'));
    });
    await expect(running).rejects.toThrow('cancelled');
    expect(calls).toBe(2);
  });
});
