import { hash } from 'node:crypto';
import { randomBase62 } from '../common/ids';

export const KEY_TYPES = ['user', 'service', 'temporary'] as const;
export type KeyType = (typeof KEY_TYPES)[number];

const PREFIX_BY_TYPE: Record<KeyType, string> = { user: 'sk_user_', service: 'sk_svc_', temporary: 'sk_temp_' };

/** Any of our secrets: `sk_{user|svc|temp}_` + 32 base62 characters. */
export const API_KEY_PATTERN = /^sk_(user|svc|temp)_[0-9A-Za-z]{32}$/;
export const SERVICE_KEY_PATTERN = /^sk_svc_[0-9A-Za-z]{32}$/;

/** The spellings `type` accepts on create (docs/API.md#keys-and-scopes). */
export const KEY_TYPE_ALIASES: Record<string, KeyType> = {
  user: 'user',
  service: 'service',
  svc: 'service',
  temporary: 'temporary',
  temp: 'temporary',
};

export function generateSecret(type: KeyType): string {
  return PREFIX_BY_TYPE[type] + randomBase62(32);
}

/** Keys are stored and looked up only by this digest. */
export function hashSecret(secret: string): string {
  // The one-shot form: about half the cost of a Hash object, on every authenticated request.
  return hash('sha256', secret, 'hex');
}

export function keyTypeOfSecret(secret: string): KeyType | null {
  const match = API_KEY_PATTERN.exec(secret);
  if (!match) return null;
  return ({ user: 'user', svc: 'service', temp: 'temporary' } as const)[match[1] as 'user' | 'svc' | 'temp'];
}
