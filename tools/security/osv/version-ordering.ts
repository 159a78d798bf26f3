/**
 * How each ecosystem orders its versions, for OSV range evaluation. A new ecosystem (Debian's
 * dpkg order, Alpine's apk order for image-scan) is one more VersionOrdering passed to the
 * matcher; nothing else changes.
 */
import * as pep440 from '@renovatebot/pep440';
import * as semver from 'semver';

export interface VersionOrdering {
  /** Negative, zero or positive as `a` sorts before, with or after `b`; undefined when either is not a version here. */
  compare(a: string, b: string): number | undefined;
  /** Normal form for exact comparison with an OSV `versions` entry. */
  normalise(version: string): string;
}

/** SemVer 2.0 precedence (build metadata ignored), as OSV's SEMVER ranges are defined. */
export const semverOrdering: VersionOrdering = {
  compare(a, b) {
    const left = semver.parse(a);
    const right = semver.parse(b);
    return left && right ? left.compare(right) : undefined;
  },
  normalise: (version) => version,
};

/**
 * Go modules: SemVer with a `v` prefix, which OSV drops. Pseudo-versions
 * (`v0.0.0-20210226172049-e18ecbb05110`) are SemVer pre-releases and `+incompatible` is build
 * metadata, so SemVer precedence orders them as the go command does.
 */
export const goOrdering: VersionOrdering = {
  compare: (a, b) => semverOrdering.compare(stripV(a), stripV(b)),
  normalise: stripV,
};

/** PyPI: PEP 440 (epochs, pre-, post- and dev-releases, local versions). */
export const pep440Ordering: VersionOrdering = {
  compare(a, b) {
    if (!pep440.valid(a) || !pep440.valid(b)) return undefined;
    return pep440.compare(a, b);
  },
  normalise: (version) => pep440.clean(version) ?? version,
};

function stripV(version: string): string {
  return version.startsWith('v') ? version.slice(1) : version;
}
