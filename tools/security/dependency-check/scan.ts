/**
 * dependency-check's work: lockfiles in, OSV findings out. The tool file holds the definition;
 * this holds what it does, so it stays readable next to its long examples.
 */
import { compareText, countBy, ToolError, type ToolContext } from '@tos/sdk';
import { firstResults } from '../../shared/scan';
import { dependencyPaths, findLockfiles, normalisePypiName, readLockfile, type Lockfile, type LockfileFormat, type SkippedEntry } from '../../shared/lockfiles';
import {
  advisorySource,
  bySeverityThenName,
  describeAdvisory,
  describeAdvisoryData,
  findAdvisories,
  goOrdering,
  pep440Ordering,
  semverOrdering,
  severityRank,
  SEVERITIES,
  type EcosystemRules,
  type PackageQuery,
  type Severity,
} from '../../integrations/osv';
import type { DependencyCheckInput, DependencyCheckOutput } from './dependency-check.tool';

/** Skipped lockfile entries listed in the output (the count is always whole). */
export const MAX_SKIPPED_LISTED = 100;

export type Vulnerability = DependencyCheckOutput['vulnerabilities'][number];

/** How each ecosystem orders versions and compares names, and how its users spell a version. */
const ECOSYSTEMS: Readonly<Record<string, EcosystemRules & { spell?: (version: string) => string }>> = {
  npm: { ordering: semverOrdering },
  PyPI: { ordering: pep440Ordering, normaliseName: normalisePypiName },
  // OSV drops Go's `v`; go.mod and `go get` need it.
  Go: { ordering: goOrdering, spell: (version) => (version.startsWith('v') ? version : `v${version}`) },
};

export async function dependencyCheck(input: DependencyCheckInput, ctx: ToolContext): Promise<DependencyCheckOutput> {
  const source = advisorySource(ctx);
  const files = await findLockfiles(ctx.workspace, input.path);
  const lockfiles: Lockfile[] = [];
  for (const file of files) {
    ctx.signal.throwIfAborted();
    lockfiles.push(await readLockfile(ctx.workspace, file));
  }
  ctx.progress(10, `${lockfiles.length} lockfile(s) read`);

  // One query per distinct package version; each remembers where it was installed.
  const queries: PackageQuery[] = [];
  const installs: Array<Array<{ lockfile: Lockfile; key: string }>> = [];
  const position = new Map<string, number>();
  for (const lockfile of lockfiles) {
    for (const entry of lockfile.packages) {
      if (entry.dev && !input.include_dev) continue;
      const id = `${lockfile.ecosystem}\0${entry.name}\0${entry.version}`;
      let at = position.get(id);
      if (at === undefined) {
        at = queries.push({ ecosystem: lockfile.ecosystem, name: entry.name, version: entry.version }) - 1;
        position.set(id, at);
        installs.push([]);
      }
      installs[at].push({ lockfile, key: entry.key });
    }
  }

  const queriedAt = new Date();
  const lookup = await findAdvisories(queries, source, {
    ecosystems: ECOSYSTEMS,
    signal: ctx.signal,
    onProgress: (share) => ctx.progress(10 + Math.round(share * 80), 'matching advisories'),
  });

  const paths = new Map(lockfiles.map((lockfile) => [lockfile, dependencyPaths(lockfile)]));
  const packagesOf = new Map(lockfiles.map((lockfile) => [lockfile, new Map(lockfile.packages.map((entry) => [entry.key, entry]))]));
  const threshold = severityRank(input.min_severity);
  const found: Vulnerability[] = [];
  for (const { query, record, match } of lookup.findings) {
    const advisory = describeAdvisory(record, match.affected);
    // Unknown severity cannot be said to be below the threshold: it is always reported.
    if (advisory.severity !== 'unknown' && severityRank(advisory.severity) > threshold) continue;
    for (const { lockfile, key } of installs[query]) {
      const entry = packagesOf.get(lockfile)!.get(key)!;
      found.push({
        ...advisory,
        package: entry.name,
        ecosystem: lockfile.ecosystem,
        installed_version: entry.version,
        fixed_versions: match.fixed.map(ECOSYSTEMS[lockfile.ecosystem].spell ?? ((version) => version)),
        file: lockfile.file,
        direct: entry.direct,
        dev: entry.dev,
        dependency_path: paths.get(lockfile)!.get(key)!,
      });
    }
  }
  found.sort(bySeverityThenName<Vulnerability>((finding) => finding.file));
  const { items: vulnerabilities, ...page } = firstResults(found, input.max_results);
  const skipped = lockfiles.flatMap((lockfile) => lockfile.skipped.map((entry) => ({ file: lockfile.file, ...entry })));
  ctx.progress(100, `${found.length} vulnerable package version(s)`);
  return {
    vulnerabilities,
    ...page,
    summary: countBy(SEVERITIES, found, (entry) => entry.severity),
    packages_scanned: queries.length,
    lockfiles: lockfiles.map((lockfile) => ({
      file: lockfile.file,
      format: lockfile.format,
      ecosystem: lockfile.ecosystem,
      packages: lockfile.packages.length,
      skipped: lockfile.skipped.length,
    })),
    skipped: skipped.slice(0, MAX_SKIPPED_LISTED),
    source: source.kind === 'directory' ? 'osv-data-dir' : 'osv-api',
    advisory_data: await describeAdvisoryData(source, queries.map((query) => query.ecosystem), queriedAt),
    warnings: lookup.warnings,
  };
}

