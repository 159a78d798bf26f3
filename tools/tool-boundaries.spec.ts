/**
 * What a file under tools/ may import (docs/writing-a-tool.md; ESLint says the same in the editor):
 * of the service, only the SDK by its package name (`@tos/sdk`, `@tos/sdk/testing`), never a path
 * into src/; of tools/, its own folder — a tool's `<family>/<id>/`, an integration's
 * `integrations/<name>/` — anything of `shared/`, and, for a tool, an integration through its
 * public face (`integrations/<name>`, its index.ts). Never another tool's folder, another family,
 * or an integration's internals: a tool that needs what another has asks for it in shared/ or in
 * an integration. Reads every import of every file, so a planted one fails with the edge named.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

const TOOLS = __dirname;
const SERVICE = path.join(TOOLS, '..', 'src');

/** The folder a file belongs to: `shared`, `integrations/<name>`, or a tool's `<family>/<id>`. */
function homeOf(file: string): string {
  const [first, second] = path.relative(TOOLS, file).split(path.sep);
  return first === 'shared' ? first : `${first}/${second}`;
}

/** Why `file` may not import `target` (absolute paths, `target` as resolved), or undefined when it may. */
function boundaryViolation(file: string, target: string): string | undefined {
  const from = homeOf(file);
  if (!path.relative(SERVICE, target).startsWith('..')) return `${from} imports ${path.relative(path.dirname(TOOLS), target)} by path: import the SDK as @tos/sdk`;
  const relative = path.relative(TOOLS, target);
  if (relative.startsWith('..')) return undefined;
  const to = homeOf(target);
  if (to === from || to === 'shared') return undefined;
  const [kind, name, ...rest] = relative.split(path.sep);
  const publicFace = kind === 'integrations' && (rest.length === 0 || (rest.length === 1 && /^index\.(ts|js)$/.test(rest[0])));
  if (publicFace && from !== 'shared' && !from.startsWith('integrations/')) return undefined;
  if (publicFace) return `${from} imports the integration ${name}: only tools use integrations`;
  if (kind === 'integrations') return `${from} imports the internals of the integration ${name}: import its index (tools/integrations/${name})`;
  return `${from} imports ${to}, another tool's folder: move what both need to tools/shared or an integration`;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .filter((file) => !file.split(path.sep).includes('fixtures') && path.dirname(file) !== TOOLS);
}

/** A relative specifier resolved as Node does for these sources: a file (`.ts`) or a folder (its index). */
function resolveImport(file: string, specifier: string): string {
  const base = path.resolve(path.dirname(file), specifier);
  if (existsSync(`${base}.ts`)) return `${base}.ts`;
  return existsSync(base) && statSync(base).isDirectory() ? path.join(base, 'index.ts') : base;
}

/** Every `from '…'`, `import('…')` and `require('…')` of a relative path. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import|require)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((match) => resolveImport(file, match[1]));
}

describe('tool boundaries', () => {
  const at = (relative: string) => path.join(TOOLS, relative);

  it('lets a tool import its own folder, tools/shared and an integration through its index', () => {
    const tool = at('security/license-check/check.ts');
    expect(boundaryViolation(tool, at('security/license-check/examples.ts'))).toBeUndefined();
    expect(boundaryViolation(tool, at('shared/lockfiles/index.ts'))).toBeUndefined();
    expect(boundaryViolation(tool, at('integrations/npm-registry/index.ts'))).toBeUndefined();
    expect(boundaryViolation(at('integrations/osv/reporting.ts'), at('shared/scan/index.ts'))).toBeUndefined();
  });

  it('refuses a cross-family import, a sibling tool, an integration internal, and shared code reaching out', () => {
    expect(boundaryViolation(at('analysis/sbom-generate/generate.ts'), at('security/license-check/check.ts'))).toMatch(/analysis\/sbom-generate imports security\/license-check/);
    expect(boundaryViolation(at('security/image-scan/image-scan.tool.ts'), at('automation/container-build/engine-streams.ts'))).toMatch(/another tool's folder/);
    expect(boundaryViolation(at('security/iac-scan/scan.ts'), at('security/sast-scan/rules.ts'))).toMatch(/another tool's folder/);
    expect(boundaryViolation(at('automation/vcs-workflow/vcs-workflow.tool.ts'), at('integrations/forge/forge-clients.ts'))).toMatch(/internals of the integration forge/);
    expect(boundaryViolation(at('shared/scan/index.ts'), at('integrations/osv/index.ts'))).toMatch(/only tools use integrations/);
    expect(boundaryViolation(at('shared/scan/index.ts'), at('security/iac-scan/rules.ts'))).toMatch(/another tool's folder/);
  });

  it('refuses a path into src/, the SDK included: the SDK is imported as @tos/sdk', () => {
    const tool = at('security/license-check/check.ts');
    expect(boundaryViolation(tool, path.join(TOOLS, '../src/tools/sdk/index.ts'))).toMatch(/security\/license-check imports src\/tools\/sdk\/index.ts by path: import the SDK as @tos\/sdk/);
    expect(boundaryViolation(at('shared/scan/index.ts'), path.join(TOOLS, '../src/workspaces/workspaces.service.ts'))).toMatch(/by path/);
  });

  it('holds for every import of every file under tools/', () => {
    const crossings: string[] = [];
    for (const file of sourceFiles(TOOLS)) {
      for (const target of importsOf(file)) {
        const violation = boundaryViolation(file, target);
        if (violation) crossings.push(`${path.relative(TOOLS, file)}: ${violation}`);
      }
    }
    expect(crossings).toEqual([]);
  });
});
