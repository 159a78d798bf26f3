/** What every lockfile parser produces: the packages a project installs and how they connect. */
import { compareText } from '@tos/sdk';

/** OSV ecosystem names (https://ossf.github.io/osv-schema/#defined-ecosystems). */
export type Ecosystem = 'npm' | 'PyPI' | 'Go';

export const LOCKFILE_FORMATS = ['package-lock', 'yarn', 'pnpm', 'requirements', 'go.sum'] as const;
export type LockfileFormat = (typeof LOCKFILE_FORMATS)[number];

export interface LockedPackage {
  /** `name@version`: one entry per installed version, however many places install it. */
  key: string;
  name: string;
  version: string;
  /** Depended on by the project itself (not only through another package). */
  direct: boolean;
  /** Installed only for development (every path to it starts at a dev dependency). */
  dev: boolean;
  /** Keys of the packages this one depends on. */
  dependencies: string[];
  /** Subresource-integrity value the lockfile pins (`sha512-…`), when it records one. */
  integrity?: string;
  /** Where the package manager fetched it from, when recorded. */
  resolved?: string;
  /** The licence the lockfile records (npm lockfile v2+), as written there. */
  license?: string;
}

export interface SkippedEntry {
  entry: string;
  reason: string;
}

export interface Lockfile {
  /** Workspace-relative path. */
  file: string;
  format: LockfileFormat;
  ecosystem: Ecosystem;
  /** The project the lockfile belongs to, as far as it says. */
  project: { name: string; version?: string };
  packages: LockedPackage[];
  /** Entries that name no exact installed version (unpinned requirements, links, …). */
  skipped: SkippedEntry[];
}

/** The direct dependencies a manifest beside the lockfile declares (package.json, go.mod). */
export interface Manifest {
  name?: string;
  version?: string;
  /** Dependency name → declared range. */
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

/** Accumulates one entry per `name@version`, merging what several install locations say. */
export class PackageSet {
  private readonly byKey = new Map<string, LockedPackage & { edges: Set<string> }>();

  add(entry: Omit<LockedPackage, 'key' | 'dependencies'> & { dependencies?: Iterable<string> }): string {
    const key = `${entry.name}@${entry.version}`;
    const known = this.byKey.get(key);
    if (known) {
      known.direct ||= entry.direct;
      known.dev &&= entry.dev;
      for (const dependency of entry.dependencies ?? []) known.edges.add(dependency);
      known.integrity ??= entry.integrity;
      known.resolved ??= entry.resolved;
      known.license ??= entry.license;
      return key;
    }
    const { dependencies, ...rest } = entry;
    this.byKey.set(key, { ...rest, key, dependencies: [], edges: new Set(dependencies ?? []) });
    return key;
  }

  /** Adds an edge after both ends are known. */
  link(from: string, to: string): void {
    this.byKey.get(from)?.edges.add(to);
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  /** The packages sorted by key, edges to unknown packages dropped, `dev` spread along edges. */
  list(): LockedPackage[] {
    const packages = [...this.byKey.values()].sort((a, b) => compareText(a.key, b.key));
    for (const entry of packages) entry.dependencies = [...entry.edges].filter((key) => this.byKey.has(key) && key !== entry.key).sort(compareText);
    markProductionReachable(packages);
    return packages.map(({ edges: _edges, ...entry }) => entry);
  }
}

/**
 * A package is dev-only unless a production direct dependency reaches it. Lockfiles that record
 * `dev` per package are kept as they say; this fixes up formats that only know it for roots.
 */
function markProductionReachable(packages: Array<LockedPackage & { edges: Set<string> }>): void {
  const byKey = new Map(packages.map((entry) => [entry.key, entry]));
  const queue = packages.filter((entry) => entry.direct && !entry.dev);
  for (let next = queue.shift(); next; next = queue.shift()) {
    for (const key of next.dependencies) {
      const dependency = byKey.get(key);
      if (dependency?.dev) {
        dependency.dev = false;
        queue.push(dependency);
      }
    }
  }
}
