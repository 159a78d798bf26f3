import type { Scope } from './scopes';
import type { KeyType } from './key-secret';
import type { Tier, TierLimits } from './tiers';

/** Who is calling: a verified API key (or console session, or OAuth access token) and the account it belongs to. */
export interface Principal {
  /** The key's id; for a console session (keyType `session`), the session's id; for an access token (`oauth`), `oauth:<client>:<account>`. */
  keyId: string;
  keyType: KeyType | 'session' | 'oauth';
  accountId: string;
  tier: Tier;
  limits: TierLimits;
  scopes: ReadonlySet<Scope>;
  /** Tools the key may use; null = all. */
  toolIds: ReadonlySet<string> | null;
  expiresAt: Date | null;
  /** Set for a rotated key that stays valid until then. */
  revokedAt: Date | null;
}

export function canUseTool(principal: Principal, toolId: string): boolean {
  return principal.toolIds === null || principal.toolIds.has(toolId);
}

/** How errors name the caller's credential. */
export function credentialName(principal: Principal): string {
  if (principal.keyType === 'oauth') return 'access token';
  return principal.keyType === 'session' ? 'console session' : 'API key';
}
