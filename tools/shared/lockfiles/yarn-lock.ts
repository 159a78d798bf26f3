/**
 * yarn.lock, classic (v1) and berry (v2+, `__metadata`), both read by Yarn's own parser. Entries
 * are keyed by the descriptors (`name@range`) that resolved to them; a dependency is found by its
 * descriptor. Berry records workspaces (`name@workspace:…`) whose dependencies are the roots;
 * classic does not, so the package.json beside the lockfile names them.
 */
import { parseSyml } from '@yarnpkg/parsers';
import type { Manifest } from './model';
import { PackageSet } from './model';

interface YarnEntry {
  version?: string;
  resolved?: string;
  resolution?: string;
  integrity?: string;
  linkType?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

export function parseYarnLock(text: string, manifest: Manifest | undefined) {
  const document = parseSyml(text) as Record<string, YarnEntry>;
  const berry = '__metadata' in document;
  const byDescriptor = new Map<string, YarnEntry>();
  for (const [keys, entry] of Object.entries(document)) {
    if (keys === '__metadata') continue;
    for (const descriptor of keys.split(/,\s*/)) byDescriptor.set(descriptor.trim(), entry);
  }
  const find = (name: string, range: string) => byDescriptor.get(`${name}@${range}`) ?? (berry ? byDescriptor.get(`${name}@npm:${range}`) : undefined);
  const isWorkspace = (entry: YarnEntry) => berry && (entry.linkType === 'soft' || /@workspace:/.test(entry.resolution ?? ''));

  const packages = new PackageSet();
  const skipped: { entry: string; reason: string }[] = [];
  const keyOf = new Map<YarnEntry, string>();
  for (const [descriptor, entry] of byDescriptor) {
    if (isWorkspace(entry) || keyOf.has(entry)) continue;
    if (entry.version === undefined) {
      skipped.push({ entry: descriptor, reason: 'no version recorded' });
      continue;
    }
    const name = nameOf(entry.resolution ?? descriptor);
    keyOf.set(entry, `${name}@${entry.version}`);
  }

  // Roots: berry's workspaces, else the manifest, else whatever nothing else depends on.
  // Berry's lockfile does not tell dev from production: the manifest does. Value: dev only.
  const roots = new Map<YarnEntry, boolean>();
  const addRoot = (name: string, range: string, dev: boolean) => {
    const entry = find(name, range);
    if (entry && keyOf.has(entry)) roots.set(entry, (roots.get(entry) ?? true) && dev);
  };
  const devOnly = (name: string) => manifest !== undefined && name in manifest.devDependencies && !(name in manifest.dependencies);
  const workspaces = [...new Set(byDescriptor.values())].filter(isWorkspace);
  for (const workspace of workspaces) for (const [name, range] of Object.entries(dependenciesOf(workspace))) addRoot(name, range, devOnly(name));
  if (workspaces.length === 0 && manifest) {
    for (const [name, range] of Object.entries(manifest.dependencies)) addRoot(name, range, false);
    for (const [name, range] of Object.entries(manifest.devDependencies)) addRoot(name, range, true);
  }
  const knowRoots = roots.size > 0;
  if (!knowRoots) {
    const required = new Set<YarnEntry>();
    for (const entry of keyOf.keys()) {
      for (const [name, range] of Object.entries(dependenciesOf(entry))) {
        const dependency = find(name, range);
        if (dependency) required.add(dependency);
      }
    }
    for (const entry of keyOf.keys()) if (!required.has(entry)) roots.set(entry, false);
  }

  for (const [entry, key] of keyOf) {
    const at = key.lastIndexOf('@');
    packages.add({
      name: key.slice(0, at),
      version: key.slice(at + 1),
      direct: roots.has(entry),
      // Only roots are known to be dev or not; PackageSet spreads production along the edges.
      dev: knowRoots ? (roots.get(entry) ?? true) : false,
      integrity: entry.integrity,
      resolved: entry.resolved,
      dependencies: Object.entries(dependenciesOf(entry)).flatMap(([name, range]) => {
        const dependency = find(name, range);
        const dependencyKey = dependency && keyOf.get(dependency);
        return dependencyKey ? [dependencyKey] : [];
      }),
    });
  }
  const project = workspaces.find((workspace) => /@workspace:\.$/.test(workspace.resolution ?? ''));
  return {
    project: { name: manifest?.name ?? (project ? nameOf(project.resolution!) : ''), version: manifest?.version },
    packages: packages.list(),
    skipped,
  };
}

function dependenciesOf(entry: YarnEntry): Record<string, string> {
  return { ...entry.dependencies, ...entry.optionalDependencies };
}

/** `@scope/name@npm:1.2.3` → `@scope/name`; `name@^1` → `name`. */
function nameOf(descriptor: string): string {
  const at = descriptor.indexOf('@', 1);
  return at === -1 ? descriptor : descriptor.slice(0, at);
}
