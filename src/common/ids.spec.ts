import { EXECUTION_ID_PATTERN, newAccountId, newExecutionId, newKeyId, randomBase62 } from './ids';

describe('ids', () => {
  it('execution ids have the documented form and sort by creation time', () => {
    const earlier = newExecutionId(Date.UTC(2026, 0, 1));
    const later = newExecutionId(Date.UTC(2026, 0, 1) + 1);
    expect(earlier).toMatch(EXECUTION_ID_PATTERN);
    expect(earlier < later).toBe(true);
    expect(newExecutionId(Date.UTC(2030, 0, 1)) > newExecutionId(Date.UTC(2029, 11, 31))).toBe(true);
  });

  it('ids are random where they must be', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newExecutionId(0)));
    expect(ids.size).toBe(1000);
    expect(newKeyId()).toMatch(/^key_[0-9A-Za-z]{20}$/);
    expect(newAccountId()).toMatch(/^acc_[0-9A-Za-z]{20}$/);
  });

  it('randomBase62 uses the whole alphabet', () => {
    const seen = new Set(randomBase62(20_000));
    expect(seen.size).toBe(62);
  });
});
