import { maskApiKeys } from './key-mask';

describe('maskApiKeys', () => {
  it('keeps only the type and last four characters of every key in a text', () => {
    const user = `sk_user_${'A'.repeat(28)}wxyz`;
    const svc = `sk_svc_${'b1'.repeat(14)}9Zz0`;
    expect(maskApiKeys(`token=${user}, other ${svc}.`)).toBe('token=sk_user_…wxyz, other sk_svc_…9Zz0.');
  });

  it('leaves look-alikes of another length or type alone', () => {
    for (const text of [`sk_svc_${'a'.repeat(31)}`, `sk_svc_${'a'.repeat(33)}`, `sk_live_${'a'.repeat(32)}`]) expect(maskApiKeys(text)).toBe(text);
  });
});
