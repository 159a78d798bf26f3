import { createHash } from 'node:crypto';
import { API_KEY_PATTERN, generateSecret, hashSecret, keyTypeOfSecret } from './key-secret';

describe('key secrets', () => {
  it.each([
    ['user', 'sk_user_'],
    ['service', 'sk_svc_'],
    ['temporary', 'sk_temp_'],
  ] as const)('%s keys start with %s and 32 base62 characters', (type, prefix) => {
    const secret = generateSecret(type);
    expect(secret.startsWith(prefix)).toBe(true);
    expect(secret.slice(prefix.length)).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(secret).toMatch(API_KEY_PATTERN);
    expect(keyTypeOfSecret(secret)).toBe(type);
  });

  it('stores SHA-256 hex only', () => {
    expect(hashSecret('sk_svc_x')).toBe(createHash('sha256').update('sk_svc_x').digest('hex'));
  });

  it('refuses other shapes', () => {
    expect(keyTypeOfSecret('sk_admin_' + 'a'.repeat(32))).toBeNull();
    expect(keyTypeOfSecret('sk_svc_' + 'a'.repeat(31))).toBeNull();
    expect(keyTypeOfSecret('sk_svc_' + 'a'.repeat(31) + '!')).toBeNull();
  });
});
