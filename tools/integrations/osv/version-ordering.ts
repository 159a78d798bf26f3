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

/**
 * Debian: dpkg's order (deb-version(7)): epoch, then upstream version and Debian revision, each
 * compared as alternating non-digit parts (letters before non-letters, `~` before everything,
 * even the end) and numeric parts.
 */
export const dpkgOrdering: VersionOrdering = {
  compare(a, b) {
    const left = dpkgParts(a);
    const right = dpkgParts(b);
    if (!left || !right) return undefined;
    return Math.sign(left.epoch - right.epoch) || dpkgCompareString(left.upstream, right.upstream) || dpkgCompareString(left.revision, right.revision);
  },
  normalise: (version) => version,
};

function dpkgParts(version: string): { epoch: number; upstream: string; revision: string } | undefined {
  const match = /^(?:(\d+):)?([0-9][A-Za-z0-9.+~:-]*?)(?:-([A-Za-z0-9.+~]+))?$/.exec(version.trim());
  return match ? { epoch: Number(match[1] ?? 0), upstream: match[2], revision: match[3] ?? '0' } : undefined;
}

function dpkgCharOrder(char: string | undefined): number {
  if (char === undefined) return 0;
  if (char === '~') return -1;
  if (/[A-Za-z]/.test(char)) return char.charCodeAt(0);
  return char.charCodeAt(0) + 256;
}

function dpkgCompareString(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    // Non-digit parts, character by character.
    while ((i < a.length && !/\d/.test(a[i])) || (j < b.length && !/\d/.test(b[j]))) {
      const left = i < a.length && !/\d/.test(a[i]) ? a[i] : undefined;
      const right = j < b.length && !/\d/.test(b[j]) ? b[j] : undefined;
      const order = dpkgCharOrder(left) - dpkgCharOrder(right);
      if (order !== 0) return Math.sign(order);
      if (left !== undefined) i++;
      if (right !== undefined) j++;
    }
    // Numeric parts, as numbers.
    let left = '';
    let right = '';
    while (i < a.length && /\d/.test(a[i])) left += a[i++];
    while (j < b.length && /\d/.test(b[j])) right += b[j++];
    const order = Math.sign(Number(left || 0) - Number(right || 0));
    if (order !== 0) return order;
  }
  return 0;
}

/**
 * Alpine: apk's order (apk-tools version.c, simplified to what Alpine packages use): dotted
 * numbers, an optional letter, suffixes (_alpha < _beta < _pre < _rc < none < _cvs < _svn < _git
 * < _hg < _p, each with a number) and the package revision -rN.
 */
export const apkOrdering: VersionOrdering = {
  compare(a, b) {
    const left = apkParts(a);
    const right = apkParts(b);
    if (!left || !right) return undefined;
    for (let k = 0; k < Math.max(left.numbers.length, right.numbers.length); k++) {
      const order = Math.sign((left.numbers[k] ?? -1) - (right.numbers[k] ?? -1));
      if (order !== 0) return order;
    }
    if (left.letter !== right.letter) return left.letter < right.letter ? -1 : 1;
    for (let k = 0; k < Math.max(left.suffixes.length, right.suffixes.length); k++) {
      const [lRank, lNumber] = left.suffixes[k] ?? [APK_NO_SUFFIX, 0];
      const [rRank, rNumber] = right.suffixes[k] ?? [APK_NO_SUFFIX, 0];
      const order = Math.sign(lRank - rRank) || Math.sign(lNumber - rNumber);
      if (order !== 0) return order;
    }
    return Math.sign(left.revision - right.revision);
  },
  normalise: (version) => version,
};

const APK_SUFFIXES = ['alpha', 'beta', 'pre', 'rc', '', 'cvs', 'svn', 'git', 'hg', 'p'];
const APK_NO_SUFFIX = APK_SUFFIXES.indexOf('');

function apkParts(version: string): { numbers: number[]; letter: string; suffixes: [number, number][]; revision: number } | undefined {
  const match = /^(\d+(?:\.\d+)*)([a-z]?)((?:_(?:alpha|beta|pre|rc|cvs|svn|git|hg|p)\d*)*)(?:-r(\d+))?$/.exec(version.trim());
  if (!match) return undefined;
  const suffixes = [...match[3].matchAll(/_([a-z]+)(\d*)/g)].map(([, name, number]) => [APK_SUFFIXES.indexOf(name), Number(number || 0)] as [number, number]);
  return { numbers: match[1].split('.').map(Number), letter: match[2], suffixes, revision: Number(match[4] ?? 0) };
}
