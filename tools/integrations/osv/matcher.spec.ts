import { fixesFor, matchRecord } from './matcher';
import type { OsvRecord, OsvRange } from './record';
import { goOrdering, pep440Ordering, semverOrdering, type VersionOrdering } from './version-ordering';

const record = (ranges: OsvRange[], extra: Partial<OsvRecord> & { versions?: string[]; ecosystem?: string; name?: string } = {}): OsvRecord => ({
  id: 'TEST-1',
  ...extra,
  affected: [{ package: { ecosystem: extra.ecosystem ?? 'npm', name: extra.name ?? 'pkg' }, ranges, versions: extra.versions }],
});
const semverRange = (...events: OsvRange['events']): OsvRange => ({ type: 'SEMVER', events });
const affected = (osv: OsvRecord, version: string, ordering: VersionOrdering = semverOrdering, ecosystem = 'npm', name = 'pkg') =>
  matchRecord(osv, { ecosystem, name, version }, { ordering, normaliseName: (n) => n.toLowerCase() }) !== undefined;

describe('OSV range evaluation', () => {
  it('treats introduced as inclusive and fixed as exclusive, with "0" before every version', () => {
    const osv = record([semverRange({ introduced: '0' }, { fixed: '1.2.0' })]);
    expect(affected(osv, '0.0.1')).toBe(true);
    expect(affected(osv, '1.1.9')).toBe(true);
    expect(affected(osv, '1.2.0-rc.1')).toBe(true);
    expect(affected(osv, '1.2.0')).toBe(false);
  });

  it('treats last_affected as inclusive', () => {
    const osv = record([semverRange({ introduced: '1.0.0' }, { last_affected: '1.4.2' })]);
    expect(affected(osv, '0.9.0')).toBe(false);
    expect(affected(osv, '1.4.2')).toBe(true);
    expect(affected(osv, '1.4.3')).toBe(false);
  });

  it('evaluates several introduced/fixed pairs in version order whatever their listed order', () => {
    const osv = record([semverRange({ fixed: '2.3.1' }, { introduced: '2.0.0' }, { fixed: '1.5.4' }, { introduced: '1.0.0' })]);
    expect([affected(osv, '1.5.3'), affected(osv, '1.5.4'), affected(osv, '1.9.9'), affected(osv, '2.0.0'), affected(osv, '2.3.1')]).toEqual([true, false, false, true, false]);
    expect(matchRecord(osv, { ecosystem: 'npm', name: 'pkg', version: '1.2.0' }, { ordering: semverOrdering })?.fixed).toEqual(['1.5.4', '2.3.1']);
  });

  it('honours limit events (below a limit only, "*" meaning none)', () => {
    expect(affected(record([semverRange({ introduced: '0' }, { limit: '2.0.0' })]), '1.9.9')).toBe(true);
    expect(affected(record([semverRange({ introduced: '0' }, { limit: '2.0.0' })]), '2.0.0')).toBe(false);
    expect(affected(record([semverRange({ introduced: '0' }, { limit: '*' })]), '9.9.9')).toBe(true);
  });

  it('matches the versions list exactly, leaves GIT ranges out, and ignores withdrawn records', () => {
    expect(affected(record([], { versions: ['1.0.0'] }), '1.0.0')).toBe(true);
    expect(affected(record([], { versions: ['1.0.0'] }), '1.0.1')).toBe(false);
    expect(affected(record([{ type: 'GIT', events: [{ introduced: '0' }] }]), '1.0.0')).toBe(false);
    expect(affected(record([semverRange({ introduced: '0' })], { withdrawn: '2024-01-01T00:00:00Z' }), '1.0.0')).toBe(false);
  });

  it('orders PyPI versions by PEP 440: epochs, pre-, post- and dev-releases', () => {
    const osv = record([{ type: 'ECOSYSTEM', events: [{ introduced: '2.0' }, { fixed: '2.0.1' }] }], { ecosystem: 'PyPI', name: 'Django' });
    const py = (version: string) => affected(osv, version, pep440Ordering, 'PyPI', 'django');
    expect([py('2.0rc1'), py('2.0'), py('2.0.0'), py('2.0.post1'), py('2.0.1.dev0'), py('2.0.1'), py('1!1.0')]).toEqual([false, true, true, true, true, false, false]);
  });

  it('orders Go pseudo-versions and +incompatible by SemVer after dropping the v', () => {
    const osv = record([semverRange({ introduced: '0' }, { fixed: '0.0.0-20210520170846-37e1c6afe023' })], { ecosystem: 'Go', name: 'golang.org/x/net' });
    const go = (version: string) => affected(osv, version, goOrdering, 'Go', 'golang.org/x/net');
    expect([go('v0.0.0-20210226172049-e18ecbb05110'), go('v0.0.0-20210520170846-37e1c6afe023'), go('v0.1.0')]).toEqual([true, false, false]);
    const incompatible = record([semverRange({ introduced: '2.0.0' }, { fixed: '2.5.0' })], { ecosystem: 'Go', name: 'm' });
    expect(affected(incompatible, 'v2.4.0+incompatible', goOrdering, 'Go', 'm')).toBe(true);
  });

  it('matches an ecosystem with a release suffix only when the query asks for that release or for any', () => {
    const osv = record([{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '2.0' }] }], { ecosystem: 'Debian:12', name: 'openssl' });
    const ordering = dottedNumericOrdering();
    expect(matchRecord(osv, { ecosystem: 'Debian:12', name: 'openssl', version: '1.0' }, { ordering })).toBeDefined();
    expect(matchRecord(osv, { ecosystem: 'Debian', name: 'openssl', version: '1.0' }, { ordering })).toBeDefined();
    expect(matchRecord(osv, { ecosystem: 'Debian:11', name: 'openssl', version: '1.0' }, { ordering })).toBeUndefined();
  });

  it('gives the fix versions above the installed one without deciding (an API answered)', () => {
    const osv = record([semverRange({ introduced: '0' }, { fixed: '1.0.5' }, { introduced: '2.0.0' }, { fixed: '2.0.3' })]);
    expect(fixesFor(osv, { ecosystem: 'npm', name: 'pkg', version: '1.0.7' }, { ordering: semverOrdering }).fixed).toEqual(['2.0.3']);
  });
});

/** A stand-in ordering (numeric dotted), as image-scan's dpkg ordering will plug in. */
function dottedNumericOrdering(): VersionOrdering {
  const parts = (version: string) => version.split('.').map(Number);
  return {
    compare(a, b) {
      const [x, y] = [parts(a), parts(b)];
      if ([...x, ...y].some(Number.isNaN)) return undefined;
      for (let index = 0; index < Math.max(x.length, y.length); index += 1) {
        const difference = (x[index] ?? 0) - (y[index] ?? 0);
        if (difference !== 0) return Math.sign(difference);
      }
      return 0;
    },
    normalise: (version) => version,
  };
}
