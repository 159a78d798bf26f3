import type { Principal } from '../identity/principal';

/** The caller a run acts for, as stored with it: every step is admitted as this key's own call. */
export interface StoredPrincipal {
  keyId: string;
  keyType: Principal['keyType'];
  accountId: string;
  tier: Principal['tier'];
  limits: Principal['limits'];
  scopes: string[];
  toolIds: string[] | null;
  expiresAt: string | null;
}

export function storePrincipal(principal: Principal): StoredPrincipal {
  return {
    keyId: principal.keyId,
    keyType: principal.keyType,
    accountId: principal.accountId,
    tier: principal.tier,
    limits: principal.limits,
    scopes: [...principal.scopes],
    toolIds: principal.toolIds && [...principal.toolIds],
    expiresAt: principal.expiresAt?.toISOString() ?? null,
  };
}

export function restorePrincipal(stored: StoredPrincipal): Principal {
  return {
    keyId: stored.keyId,
    keyType: stored.keyType,
    accountId: stored.accountId,
    tier: stored.tier,
    limits: stored.limits,
    scopes: new Set(stored.scopes) as Principal['scopes'],
    toolIds: stored.toolIds && new Set(stored.toolIds),
    expiresAt: stored.expiresAt === null ? null : new Date(stored.expiresAt),
    revokedAt: null,
  };
}
