import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
const { pruneStaleOutput } = require('./stale-output') as { pruneStaleOutput(parsed: unknown): string[] };

describe('pruneStaleOutput', () => {
  let root: string;
  const file = (relative: string) => {
    const at = path.join(root, relative);
    mkdirSync(path.dirname(at), { recursive: true });
    writeFileSync(at, '');
    return at;
  };

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'stale-output-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('removes the outputs of sources that are gone, and the folders it empties, keeping the rest', () => {
    const kept = file('tools/json/json-transform.tool.ts');
    const outputs = ['dist/tools/json/json-transform.tool.js', 'dist/tools/json/json-transform.tool.js.map'].map(file);
    const moved = ['dist/tools/analysis/code-quality.tool.js', 'dist/tools/analysis/code-quality.tool.js.map'].map(file);
    const notOutputs = ['dist/node_modules/@tos/sdk/index.js', 'dist/build.tsbuildinfo', 'dist/.build-stamp'].map(file);

    const removed = pruneStaleOutput({ options: { outDir: path.join(root, 'dist'), rootDir: root }, fileNames: [kept] });

    expect(removed.sort()).toEqual(moved.sort());
    expect(existsSync(path.join(root, 'dist/tools/analysis'))).toBe(false);
    for (const still of [...outputs, ...notOutputs]) expect(existsSync(still)).toBe(true);
  });

  it('does nothing before the first build', () => {
    expect(pruneStaleOutput({ options: { outDir: path.join(root, 'dist'), rootDir: root }, fileNames: [] })).toEqual([]);
  });
});
