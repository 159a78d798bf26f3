/**
 * "An extension package written against the SDK compiles without the service's source tree":
 * the SDK packed as npm would ship it (package.json `files`), installed in an empty directory
 * with its dependencies and peers, and test/extension-fixture copied beside it, type-checked by tsc
 * with the service's strictness. Nothing of src/ or tools/ is on the way: tsc lists what it read.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

const SDK = __dirname;
const ROOT = path.join(SDK, '..', '..', '..');
const FIXTURE = path.join(ROOT, 'test', 'extension-fixture');
const manifest = JSON.parse(readFileSync(path.join(SDK, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string>; dependencies?: Record<string, string> };

/** The packed SDK unpacked in `dir`/node_modules/@tos/sdk; returns the files it ships. */
function installPackedSdk(dir: string): string[] {
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: SDK, encoding: 'utf8' })) as [{ filename: string; files: { path: string }[] }];
  const target = path.join(dir, 'node_modules', '@tos', 'sdk');
  mkdirSync(target, { recursive: true });
  execFileSync('tar', ['-xzf', path.join(dir, packed.filename), '-C', target, '--strip-components=1']);
  return packed.files.map((file) => file.path).sort();
}

/** A package the extension needs besides the SDK, as its own install would have it (here the service's copy). */
function linkPackage(dir: string, name: string): void {
  const link = path.join(dir, 'node_modules', name);
  mkdirSync(path.dirname(link), { recursive: true });
  symlinkSync(path.join(ROOT, 'node_modules', name), link, 'dir');
}

describe('the SDK as a package', () => {
  let dir: string;
  let shipped: string[];
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sdk-package-'));
    shipped = installPackedSdk(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('ships its sources without the specs and without the test kit, which runs on the service', () => {
    expect(shipped).toContain('index.ts');
    expect(shipped.filter((file) => file.endsWith('.spec.ts') || file === 'testing.ts')).toEqual([]);
  });

  it('type-checks an extension package against the packed SDK alone', () => {
    for (const name of [...Object.keys(manifest.peerDependencies), ...Object.keys(manifest.dependencies ?? {}), '@types/node']) linkPackage(dir, name);
    for (const file of readdirSync(FIXTURE)) copyFileSync(path.join(FIXTURE, file), path.join(dir, file));
    const compilerOptions = {
      strict: true,
      module: 'commonjs',
      target: 'ES2022',
      lib: ['ES2023'],
      types: ['node'],
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      esModuleInterop: true,
      skipLibCheck: true,
      noEmit: true,
    };
    writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*.ts'] }));
    let read: string[];
    try {
      read = execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', dir, '--listFiles'], { encoding: 'utf8' }).trim().split('\n');
    } catch (error) {
      throw new Error(`tsc failed on the extension package:\n${(error as { stdout?: string }).stdout ?? error}`);
    }
    expect(read).toContain(path.join(dir, 'node_modules/@tos/sdk/index.ts'));
    expect(read.filter((file) => file.startsWith(path.join(ROOT, 'src') + path.sep) || file.startsWith(path.join(ROOT, 'tools') + path.sep))).toEqual([]);
  }, 60_000);
});
