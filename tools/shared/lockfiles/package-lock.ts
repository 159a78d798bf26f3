/**
 * npm's package-lock.json (and npm-shrinkwrap.json): lockfile v1 (a nested `dependencies` tree)
 * and v2/v3 (a flat `packages` map keyed by install location). Dependencies resolve the way Node
 * finds them: in the dependent's own node_modules, then in each ancestor's.
 */
import type { Manifest, SkippedEntry } from './model';
import { PackageSet } from './model';

interface LocationEntry {
  name?: string;
  version?: string;
  resolved?: string;
  integrity?: string;
  license?: string;
  dev?: boolean;
  devOptional?: boolean;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

interface V1Entry {
  version?: string;
  resolved?: string;
  integrity?: string;
  dev?: boolean;
  requires?: Record<string, string>;
  dependencies?: Record<string, V1Entry>;
}

interface PackageLockDocument {
  name?: string;
  version?: string;
  lockfileVersion?: number;
  packages?: Record<string, LocationEntry>;
  dependencies?: Record<string, V1Entry>;
}

const MODULES = 'node_modules/';

export function parsePackageLock(document: PackageLockDocument, manifest: Manifest | undefined) {
  const locations = document.packages ?? fromV1Tree(document.dependencies ?? {}, manifest);
  const packages = new PackageSet();
  const skipped: SkippedEntry[] = [];

  /** The location a dependency of `from` resolves to, links followed. */
  const resolveFrom = (from: string, name: string): string | undefined => {
    for (let base: string | undefined = from; base !== undefined; base = parentOf(base)) {
      const candidate = base === '' ? `${MODULES}${name}` : `${base}/${MODULES}${name}`;
      const entry = locations[candidate];
      if (entry) return entry.link && entry.resolved !== undefined ? entry.resolved : candidate;
    }
    return undefined;
  };
  const keyOf = (location: string): string | undefined => {
    const entry = locations[location];
    if (!entry || !isInstalled(location) || entry.version === undefined) return undefined;
    return `${nameAt(location, entry)}@${entry.version}`;
  };
  const dependencyNames = (entry: LocationEntry) =>
    Object.keys({ ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies, ...entry.devDependencies });
  // A v1 lockfile without a manifest: the roots are the top-level installs nothing resolves to.
  locations[''] ??= { dependencies: Object.fromEntries(unrequiredTopLevel(locations, dependencyNames, resolveFrom).map((name) => [name, '*'])) };
  const root = locations[''];

  // Roots: the project and its workspace members (locations outside node_modules).
  const direct = new Set<string>();
  for (const [location, entry] of Object.entries(locations)) {
    if (isInstalled(location) || entry.link) continue;
    for (const name of dependencyNames(entry)) {
      const target = resolveFrom(location, name);
      const key = target === undefined ? undefined : keyOf(target);
      if (key) direct.add(key);
    }
  }

  for (const [location, entry] of Object.entries(locations)) {
    if (!isInstalled(location) || entry.link) continue;
    if (entry.version === undefined) {
      skipped.push({ entry: location, reason: 'no version recorded' });
      continue;
    }
    const key = packages.add({
      name: nameAt(location, entry),
      version: entry.version,
      direct: direct.has(`${nameAt(location, entry)}@${entry.version}`),
      dev: Boolean(entry.dev || entry.devOptional),
      integrity: entry.integrity,
      resolved: entry.resolved,
      license: typeof entry.license === 'string' ? entry.license : undefined,
    });
    for (const name of dependencyNames(entry)) {
      const target = resolveFrom(location, name);
      const dependency = target === undefined ? undefined : keyOf(target);
      if (dependency) packages.link(key, dependency);
    }
  }
  return {
    project: { name: document.name ?? root.name ?? manifest?.name ?? '', version: document.version ?? root.version ?? manifest?.version },
    packages: packages.list(),
    skipped,
  };
}

/** Installed packages live under node_modules; other locations are the project's own workspaces. */
function isInstalled(location: string): boolean {
  return location.startsWith(MODULES) || location.includes(`/${MODULES}`);
}

function nameAt(location: string, entry: LocationEntry): string {
  if (entry.name) return entry.name;
  const at = location.lastIndexOf(MODULES);
  return location.slice(at + MODULES.length);
}

/** `a/node_modules/b` → `a`; `node_modules/b` → ``; the root has no parent. */
function parentOf(location: string): string | undefined {
  if (location === '') return undefined;
  const at = location.lastIndexOf(`/${MODULES}`);
  return at === -1 ? '' : location.slice(0, at);
}

/** Lockfile v1 as v2 locations. v1 does not list the root's dependencies: the manifest beside it does. */
function fromV1Tree(tree: Record<string, V1Entry>, manifest: Manifest | undefined): Record<string, LocationEntry> {
  const locations: Record<string, LocationEntry> = {};
  const walk = (entries: Record<string, V1Entry>, base: string) => {
    for (const [name, entry] of Object.entries(entries)) {
      const location = base === '' ? `${MODULES}${name}` : `${base}/${MODULES}${name}`;
      locations[location] = { version: entry.version, resolved: entry.resolved, integrity: entry.integrity, dev: entry.dev, dependencies: entry.requires };
      walk(entry.dependencies ?? {}, location);
    }
  };
  walk(tree, '');
  if (manifest) locations[''] = { dependencies: manifest.dependencies, devDependencies: manifest.devDependencies };
  return locations;
}

function unrequiredTopLevel(
  locations: Record<string, LocationEntry>,
  dependencyNames: (entry: LocationEntry) => string[],
  resolveFrom: (from: string, name: string) => string | undefined,
): string[] {
  const required = new Set(Object.entries(locations).flatMap(([location, entry]) => dependencyNames(entry).map((name) => resolveFrom(location, name))));
  return Object.keys(locations)
    .filter((location) => location.startsWith(MODULES) && !location.slice(MODULES.length).includes(`/${MODULES}`) && !required.has(location))
    .map((location) => location.slice(MODULES.length));
}
