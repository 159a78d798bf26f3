import type { Scope } from './scopes';
import type { KeyType } from './key-secret';
import type { Tier, TierLimits } from './tiers';

/** Who is calling: a verified API key and the account it belongs to. */
export interface Principal {
  /** The key's id; for a console session (keyType `session`), the session's id. */
  keyId: string;
  keyType: KeyType | 'session';
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
