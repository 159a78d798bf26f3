import type { Principal } from '../identity/principal';
import { accountLimits, type Account } from './account.entity';
import type { ApiKey } from './api-key.entity';

/** The Principal of a key row loaded with its account: what a request with that key may do. */
export function principalOfKey(key: ApiKey, account: Account): Principal {
  return {
    keyId: key.id,
    keyType: key.type,
    accountId: key.account_id,
    tier: account.tier,
    limits: accountLimits(account),
    scopes: new Set(key.scopes),
    toolIds: key.tool_ids ? new Set(key.tool_ids) : null,
    expiresAt: key.expires_at,
    revokedAt: key.revoked_at,
  };
}
