/**
 * The SDK is a package of its own (`@tos/sdk`, docs/writing-a-tool.md): its files import one
 * another, Node's built-ins and the packages its package.json declares, never the service around
 * it. The service imports the SDK, not the other way. One file is the exception: the test kit
 * (`@tos/sdk/testing`) runs a tool on the service's own machinery, and imports exactly the service
 * modules listed here. Reads every import of every file, so a planted one fails with the file named.
 */
import { builtinModules } from 'node:module';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

const SDK = __dirname;
const SRC = path.join(SDK, '..', '..');
const manifest = JSON.parse(readFileSync(path.join(SDK, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string>; dependencies?: Record<string, string> };
/** Peers the host provides (Nest, undici); dependencies the SDK brings itself (type inference from JSON Schema). */
const declared = { ...manifest.peerDependencies, ...manifest.dependencies };
const service = JSON.parse(readFileSync(path.join(SRC, '..', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };

/** What the test kit takes from the service (src/-relative): the tool compiler, the real context and its parts. */
const TEST_KIT_NEEDS = ['common/errors', 'tools/caller-questions', 'tools/context/tool-context', 'tools/egress/egress', 'tools/tool-catalogue', 'tools/tool-compiler', 'tools/tool-settings', 'tools/workspace'];

/** The package's source files; its specs run in the repository only. */
function sdkFiles(): string[] {
  return readdirSync(SDK).filter((name) => name.endsWith('.ts') && !name.endsWith('.spec.ts')).map((name) => path.join(SDK, name));
}

/** Every `from '…'`, `import '…'`, `import('…')` and `require('…')` specifier. */
function specifiersOf(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/(?:from|import|require)\s*\(?\s*'([^']+)'/g)].map((match) => match[1]);
}

/** The package a bare specifier names (`@scope/name` or `name`), or undefined for Node's built-ins. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('node:') || builtinModules.includes(specifier)) return undefined;
  return specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
}

describe('the SDK as a package', () => {
  it('imports nothing of the service outside its folder, but for the test kit', () => {
    const outside: string[] = [];
    const kitNeeds = new Set<string>();
    for (const file of sdkFiles()) {
      for (const specifier of specifiersOf(file).filter((s) => s.startsWith('.'))) {
        const target = path.resolve(path.dirname(file), specifier);
        if (path.dirname(target) === SDK) continue;
        if (path.basename(file) === 'testing.ts') kitNeeds.add(path.relative(SRC, target));
        else outside.push(`${path.basename(file)} imports ${path.relative(SRC, target)}`);
      }
    }
    expect(outside).toEqual([]);
    expect([...kitNeeds].sort()).toEqual(TEST_KIT_NEEDS);
  });

  it("declares every package it imports as a dependency or peer, at the service's own range", () => {
    const imported = new Set(sdkFiles().flatMap((file) => specifiersOf(file).filter((s) => !s.startsWith('.')).flatMap((s) => packageOf(s) ?? [])));
    expect([...imported].sort()).toEqual(Object.keys(declared).sort());
    for (const [name, range] of Object.entries(declared)) expect([name, range]).toEqual([name, service.dependencies[name]]);
  });
});
