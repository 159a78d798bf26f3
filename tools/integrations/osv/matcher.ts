/**
 * OSV's evaluation algorithm (https://ossf.github.io/osv-schema/#evaluation): a version is
 * affected when an `affected` entry of its package lists it in `versions` or places it in one of
 * its `ranges`. SEMVER ranges use SemVer precedence whatever the ecosystem, ECOSYSTEM ranges the
 * ecosystem's own ordering; GIT ranges need the repository and are left out.
 */
import { compareText } from '@tos/sdk';
import type { OsvAffected, OsvEvent, OsvRange, OsvRecord, PackageQuery } from './record';
import { semverOrdering, type VersionOrdering } from './version-ordering';

export interface MatchOptions {
  /** Ordering of the query's ecosystem (for ECOSYSTEM ranges and `versions`). */
  ordering: VersionOrdering;
  /** How package names compare in this ecosystem (PyPI: PEP 503), identity when omitted. */
  normaliseName?: (name: string) => string;
}

export interface Match {
  /** The entries of `affected` that name the package and contain the version. */
  affected: OsvAffected[];
  /** Versions that fix it above the installed one, ascending (empty when no fix is known). */
  fixed: string[];
}

/** Does the record affect this package version? Withdrawn records affect nothing. */
export function matchRecord(record: OsvRecord, query: PackageQuery, options: MatchOptions): Match | undefined {
  if (record.withdrawn) return undefined;
  const entries = entriesFor(record, query, options).filter((entry) => isAffected(entry, query.version, options.ordering));
  return entries.length === 0 ? undefined : { affected: entries, fixed: fixedVersions(entries, query.version, options.ordering) };
}

/**
 * The fix versions above `version` in the record's entries for the package, without deciding
 * whether it is affected (an OSV API's answer already did).
 */
export function fixesFor(record: OsvRecord, query: PackageQuery, options: MatchOptions): Match {
  const entries = entriesFor(record, query, options);
  return { affected: entries, fixed: fixedVersions(entries, query.version, options.ordering) };
}

function entriesFor(record: OsvRecord, query: PackageQuery, options: MatchOptions): OsvAffected[] {
  const normalise = options.normaliseName ?? ((name: string) => name);
  const name = normalise(query.name);
  return (record.affected ?? []).filter(
    (entry) => entry.package !== undefined && sameEcosystem(entry.package.ecosystem, query.ecosystem) && normalise(entry.package.name) === name,
  );
}

/**
 * `Debian:12` in a record matches a query for `Debian:12`, and a bare `Debian` query matches any
 * release; language ecosystems have no suffix.
 */
function sameEcosystem(recordEcosystem: string, queryEcosystem: string): boolean {
  return recordEcosystem === queryEcosystem || (!queryEcosystem.includes(':') && recordEcosystem.split(':')[0] === queryEcosystem);
}

function isAffected(entry: OsvAffected, version: string, ordering: VersionOrdering): boolean {
  const exact = ordering.normalise(version);
  if ((entry.versions ?? []).some((listed) => ordering.compare(listed, version) === 0 || ordering.normalise(listed) === exact)) return true;
  return (entry.ranges ?? []).some((range) => inRange(range, version, ordering));
}

function inRange(range: OsvRange, version: string, ecosystemOrdering: VersionOrdering): boolean {
  const ordering = rangeOrdering(range, ecosystemOrdering);
  if (!ordering || ordering.compare(version, version) === undefined) return false;
  const compare = (bound: string) => (bound === '0' ? 1 : ordering.compare(version, bound));
  if (!beforeLimits(range.events, version, ordering)) return false;
  let vulnerable = false;
  for (const event of sortedEvents(range.events, ordering)) {
    if (event.introduced !== undefined && (compare(event.introduced) ?? -1) >= 0) vulnerable = true;
    else if (event.fixed !== undefined && (compare(event.fixed) ?? -1) >= 0) vulnerable = false;
    else if (event.last_affected !== undefined && (compare(event.last_affected) ?? -1) > 0) vulnerable = false;
  }
  return vulnerable;
}

function rangeOrdering(range: OsvRange, ecosystemOrdering: VersionOrdering): VersionOrdering | undefined {
  if (range.type === 'SEMVER') return semverOrdering === ecosystemOrdering ? semverOrdering : versionAgnosticSemver(ecosystemOrdering);
  if (range.type === 'ECOSYSTEM') return ecosystemOrdering;
  return undefined;
}

/**
 * SEMVER bounds carry no `v`, an installed Go version does: the ecosystem's normal form of the
 * installed version, compared by SemVer precedence.
 */
function versionAgnosticSemver(ecosystemOrdering: VersionOrdering): VersionOrdering {
  return {
    compare: (a, b) => semverOrdering.compare(ecosystemOrdering.normalise(a), ecosystemOrdering.normalise(b)),
    normalise: ecosystemOrdering.normalise,
  };
}

/** No `limit` means no limit; otherwise the version must sort below one of them (`*` is infinity). */
function beforeLimits(events: OsvEvent[], version: string, ordering: VersionOrdering): boolean {
  const limits = events.flatMap((event) => (event.limit === undefined ? [] : [event.limit]));
  return limits.length === 0 || limits.some((limit) => limit.includes('*') || (ordering.compare(version, limit) ?? 1) < 0);
}

/** Events in version order, `introduced: "0"` first; bounds this ordering cannot read sort last. */
function sortedEvents(events: OsvEvent[], ordering: VersionOrdering): OsvEvent[] {
  const boundOf = (event: OsvEvent) => event.introduced ?? event.fixed ?? event.last_affected ?? event.limit ?? '';
  return [...events].sort((a, b) => {
    const left = boundOf(a);
    const right = boundOf(b);
    if (left === '0' || right === '0') return left === right ? 0 : left === '0' ? -1 : 1;
    return ordering.compare(left, right) ?? (ordering.compare(left, left) === undefined ? 1 : -1);
  });
}

function fixedVersions(entries: OsvAffected[], version: string, ecosystemOrdering: VersionOrdering): string[] {
  const fixes = new Set<string>();
  for (const entry of entries) {
    for (const range of entry.ranges ?? []) {
      const ordering = rangeOrdering(range, ecosystemOrdering);
      if (!ordering) continue;
      for (const event of range.events) {
        if (event.fixed !== undefined && (ordering.compare(event.fixed, version) ?? 1) > 0) fixes.add(event.fixed);
      }
    }
  }
  return [...fixes].sort((a, b) => ecosystemOrdering.compare(a, b) ?? semverOrdering.compare(a, b) ?? compareText(a, b));
}
