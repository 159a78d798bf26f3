/**
 * go.sum: `module version[/go.mod] h1:hash` lines. A module whose source the build needed has a
 * line without `/go.mod`; lines with only the go.mod hash are modules whose requirements were read
 * but whose code is not built, so they are not reported. go.mod beside it tells direct
 * requirements (no `// indirect`) apart.
 */
import type { Manifest, SkippedEntry } from './model';
import { PackageSet } from './model';

export function parseGoSum(text: string, manifest: Manifest | undefined) {
  const packages = new PackageSet();
  const skipped: SkippedEntry[] = [];
  const direct = manifest ? new Set(Object.keys(manifest.dependencies)) : undefined;
  for (const line of text.split(/\r?\n/)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length !== 3) continue;
    const [module, version] = fields;
    if (version.endsWith('/go.mod')) continue;
    packages.add({ name: module, version, direct: direct ? direct.has(module) : true, dev: false });
  }
  return { project: { name: manifest?.name ?? '' }, packages: packages.list(), skipped };
}

/** The module path and the requirements of a go.mod; `dependencies` are the direct ones. */
export function parseGoMod(text: string): Manifest {
  const manifest: Manifest = { dependencies: {}, devDependencies: {} };
  const moduleLine = /^module\s+(\S+)/m.exec(text);
  if (moduleLine) manifest.name = moduleLine[1].replace(/^"|"$/g, '');
  const requirement = /^\s*(?:require\s+)?([^\s()]+)\s+(v[^\s]+)(.*)$/;
  let inBlock = false;
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (/^require\s*\($/.test(trimmed)) inBlock = true;
    else if (inBlock && trimmed === ')') inBlock = false;
    else if (inBlock || trimmed.startsWith('require ')) {
      const match = requirement.exec(trimmed);
      if (match && !/\/\/\s*indirect/.test(match[3])) manifest.dependencies[match[1]] = match[2];
    }
  }
  return manifest;
}
