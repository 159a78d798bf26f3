/**
 * pnpm-lock.yaml, lockfile versions 5.x, 6.x and 9.x. Package keys changed shape across them:
 * `/name/1.0.0_peer@2` (5), `/name@1.0.0(peer@2)` (6), `name@1.0.0` with the graph moved to
 * `snapshots` (9). The importers (or, in 5.x single projects, the top level) hold the roots.
 */
import { parse } from 'yaml';
import type { SkippedEntry } from './model';
import { PackageSet } from './model';

type DependencyMap = Record<string, string | { specifier?: string; version: string }>;

interface Importer {
  dependencies?: DependencyMap;
  devDependencies?: DependencyMap;
  optionalDependencies?: DependencyMap;
}

interface PnpmPackage {
  name?: string;
  version?: string;
  resolution?: { integrity?: string; tarball?: string };
  dev?: boolean;
  license?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

interface PnpmLockDocument extends Importer {
  lockfileVersion?: string | number;
  importers?: Record<string, Importer>;
  packages?: Record<string, PnpmPackage>;
  snapshots?: Record<string, PnpmPackage>;
}

export function parsePnpmLock(text: string) {
  const document = (parse(text, { maxAliasCount: 1000 }) ?? {}) as PnpmLockDocument;
  const major = Number.parseInt(String(document.lockfileVersion ?? '5'), 10);
  const graph = major >= 9 ? (document.snapshots ?? {}) : (document.packages ?? {});
  const metadata = document.packages ?? {};
  const skipped: SkippedEntry[] = [];

  /** The graph key a dependency reference points at, from the package that names it. */
  const referenceKey = (name: string, reference: string): string | undefined => {
    if (/^(link|file|workspace):/.test(reference)) return undefined;
    if (major < 9 && reference.startsWith('/')) return reference;
    if (major >= 9 && /^@?[^@]+@/.test(reference) && !/^\d/.test(reference)) return reference; // npm alias
    return major >= 9 ? `${name}@${reference}` : major >= 6 ? `/${name}@${reference}` : `/${name}/${reference}`;
  };

  const packages = new PackageSet();
  const keyOf = new Map<string, string>();
  for (const [graphKey, entry] of Object.entries(graph)) {
    const parsed = parseKey(graphKey, major);
    const info = metadata[major >= 9 ? withoutPeers(graphKey) : graphKey] ?? entry;
    const name = info.name ?? entry.name ?? parsed?.name;
    const version = info.version ?? entry.version ?? parsed?.version;
    if (!name || !version) {
      skipped.push({ entry: graphKey, reason: 'not a registry package key' });
      continue;
    }
    keyOf.set(graphKey, `${name}@${version}`);
  }

  const roots = new Map<string, boolean>();
  const importers = document.importers ?? { '.': document };
  for (const importer of Object.values(importers)) {
    for (const [group, dev] of [['dependencies', false], ['optionalDependencies', false], ['devDependencies', true]] as const) {
      for (const [name, value] of Object.entries(importer[group] ?? {})) {
        const reference = typeof value === 'string' ? value : value.version;
        const graphKey = referenceKey(name, reference);
        const key = graphKey && keyOf.get(graphKey);
        if (key) roots.set(key, (roots.get(key) ?? true) && dev);
        else if (graphKey === undefined) skipped.push({ entry: `${name}@${reference}`, reason: 'a local link, not an installed package' });
      }
    }
  }

  for (const [graphKey, entry] of Object.entries(graph)) {
    const key = keyOf.get(graphKey);
    if (!key) continue;
    const info = metadata[major >= 9 ? withoutPeers(graphKey) : graphKey] ?? entry;
    const at = key.lastIndexOf('@');
    packages.add({
      name: key.slice(0, at),
      version: key.slice(at + 1),
      direct: roots.has(key),
      // 5.x/6.x record dev per package; 9.x only for roots, spread along the edges by PackageSet.
      dev: entry.dev ?? info.dev ?? (roots.size > 0 ? (roots.get(key) ?? true) : false),
      integrity: info.resolution?.integrity,
      resolved: info.resolution?.tarball,
      license: typeof info.license === 'string' ? info.license : undefined,
      dependencies: Object.entries({ ...entry.dependencies, ...entry.optionalDependencies }).flatMap(([name, reference]) => {
        const dependencyKey = keyOf.get(referenceKey(name, reference) ?? '');
        return dependencyKey ? [dependencyKey] : [];
      }),
    });
  }
  return { project: { name: '' }, packages: packages.list(), skipped };
}

/** `name@1.0.0(peer@2.0.0)` → `name@1.0.0`. */
function withoutPeers(key: string): string {
  const paren = key.indexOf('(');
  return paren === -1 ? key : key.slice(0, paren);
}

function parseKey(key: string, major: number): { name: string; version: string } | undefined {
  const bare = withoutPeers(key.startsWith('/') ? key.slice(1) : key);
  if (major >= 6) {
    const at = bare.lastIndexOf('@');
    return at > 0 ? { name: bare.slice(0, at), version: bare.slice(at + 1) } : undefined;
  }
  // 5.x: `name/1.0.0_peer@2.0.0` or `@scope/name/1.0.0`.
  const slash = bare.lastIndexOf('/');
  if (slash <= 0) return undefined;
  const version = bare.slice(slash + 1).split('_')[0];
  return { name: bare.slice(0, slash), version };
}
