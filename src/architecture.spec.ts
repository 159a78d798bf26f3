/**
 * The module layers of src/ run one way (docs/ARCHITECTURE.md "Layers"): a file may import its own module
 * and the layers below its own, never a module beside it or above it. Reads every import of every
 * source file, so a planted upward import fails here with the file and the edge named.
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

/** Lowest first. A module is a folder of src/ (executions split in two), or a top-level file. */
const LAYERS: readonly (readonly string[])[] = [
  ['common'],
  ['identity'],
  ['config'],
  ['redis'],
  ['database'],
  ['tools'],
  ['keys', 'idempotency'],
  ['sessions'],
  ['limits'],
  ['auth'],
  ['cache', 'secrets', 'workspaces'],
  ['webhooks'],
  ['executions/engine'],
  ['executions/request'],
  ['executions'],
  ['executions/live'],
  ['upstreams'],
  ['workflows'],
  ['mcp', 'openapi', 'observability', 'console', 'operator', 'orchestration', 'oauth'],
  ['health'],
  ['api.module', 'worker.module'],
  ['app.module', 'entities', 'cli'],
  ['app.setup'],
  ['service'],
  ['main'],
];

const SRC = __dirname;
const rank = new Map(LAYERS.flatMap((layer, index) => layer.map((module) => [module, index] as const)));

function moduleOf(file: string): string {
  const [first, second, third] = path.relative(SRC, file).split(path.sep);
  if (second === undefined) return first.replace(/\.ts$/, '');
  return first === 'executions' && third !== undefined ? `${first}/${second}` : first;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** Every `from '…'`, `import('…')` and `require('…')` of a relative path inside src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import|require)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)]
    .map((match) => path.resolve(path.dirname(file), match[1]))
    .filter((target) => target.startsWith(SRC + path.sep));
}

/** The layer table of docs/ARCHITECTURE.md: the backticked modules of each numbered row, in row order. */
function documentedLayers(): string[][] {
  const doc = readFileSync(path.join(SRC, '..', 'docs', 'ARCHITECTURE.md'), 'utf8');
  const section = doc.split(/^## /m).find((part) => part.startsWith('Layers\n')) ?? '';
  return section
    .split('\n')
    .filter((line) => /^\|\s*\d+\s*\|/.test(line))
    .map((line) => [...line.split('|')[2].matchAll(/`([^`]+)`/g)].map((match) => match[1]));
}

describe('architecture', () => {
  const files = sourceFiles(SRC);

  it('places every module of src/ in a layer', () => {
    const unplaced = [...new Set(files.map(moduleOf))].filter((module) => !rank.has(module));
    expect(unplaced).toEqual([]);
  });

  it('imports only downward (or within a module)', () => {
    const upward: string[] = [];
    for (const file of files) {
      const from = moduleOf(file);
      for (const target of importsOf(file)) {
        const to = moduleOf(target);
        if (to !== from && !(rank.get(to)! < rank.get(from)!)) upward.push(`${path.relative(SRC, file)} (${from}) imports ${to}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('is documented layer by layer in docs/ARCHITECTURE.md', () => {
    expect(documentedLayers()).toEqual(LAYERS);
  });
});
