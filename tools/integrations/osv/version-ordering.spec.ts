import { apkOrdering, dpkgOrdering } from './version-ordering';

describe('dpkg ordering', () => {
  it.each([
    ['1.0', '1.0', 0],
    ['1.0~rc1', '1.0', -1],
    ['1:0.9', '2.0', 1],
    ['3.0.11-1~deb12u1', '3.0.13-1~deb12u1', -1],
    ['3.0.11-1~deb12u2', '3.0.11-1~deb12u1', 1],
    ['1.2.13.dfsg-1', '1.2.13-1', 1],
    ['2.36-9+deb12u4', '2.36-9+deb12u10', -1],
    ['1.0a', '1.0+', -1],
    ['1.0-0', '1.0', 0],
  ])('%s vs %s is %d', (a, b, expected) => {
    expect(dpkgOrdering.compare(a, b)).toBe(expected);
    expect(dpkgOrdering.compare(b, a)).toBe(-expected || 0);
  });

  it('refuses what is no Debian version', () => {
    expect(dpkgOrdering.compare('not a version', '1.0')).toBeUndefined();
  });
});

describe('apk ordering', () => {
  it.each([
    ['1.2.3-r0', '1.2.3-r1', -1],
    ['1.2.3_rc1-r0', '1.2.3-r0', -1],
    ['1.2.3_p1-r0', '1.2.3-r5', 1],
    ['3.1.4-r5', '3.1.4-r5', 0],
    ['1.36.1-r2', '1.36.1-r15', -1],
    ['1.2a-r0', '1.2-r0', 1],
    ['2.0', '10.0', -1],
    ['1.2.3_alpha2', '1.2.3_beta1', -1],
  ])('%s vs %s is %d', (a, b, expected) => {
    expect(apkOrdering.compare(a, b)).toBe(expected);
    expect(apkOrdering.compare(b, a)).toBe(-expected || 0);
  });
});
