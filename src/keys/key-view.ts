import type { ApiKey } from './api-key.entity';

/** The key record clients see (docs/API.md#keys); never the hash. */
export function keyView(key: ApiKey) {
  return {
    id: key.id,
    name: key.name,
    type: key.type,
    prefix: key.prefix,
    last4: key.last4,
    scopes: key.scopes,
    tool_ids: key.tool_ids,
    require_signature: key.signing_secret_sealed !== null,
    created_at: iso(key.created_at),
    expires_at: iso(key.expires_at),
    revoked_at: iso(key.revoked_at),
    last_used_at: iso(key.last_used_at),
    replaces_key_id: key.replaces_key_id,
  };
}

export function iso(date: Date | null | undefined): string | null {
  return date ? date.toISOString() : null;
}
