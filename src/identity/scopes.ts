export const SCOPES = ['tools:read', 'tools:invoke', 'executions:read', 'executions:cancel', 'keys:manage', 'secrets:manage', 'workspaces:read', 'workspaces:write', 'webhooks:manage', 'workflows:manage', 'orchestration:manage', 'upstreams:manage'] as const;
export type Scope = (typeof SCOPES)[number];

/** Scopes that manage the account's credentials (webhook signing secrets, trigger secrets and standing schedules among them): never held by temporary keys. */
const CREDENTIAL_SCOPES: readonly Scope[] = ['keys:manage', 'secrets:manage', 'webhooks:manage', 'orchestration:manage', 'upstreams:manage'];

/** docs/API.md#keys-and-scopes: user and service keys hold every scope; temporary keys all but the credential scopes. */
export function defaultScopes(type: 'user' | 'service' | 'temporary'): Scope[] {
  return type === 'temporary' ? SCOPES.filter((s) => !CREDENTIAL_SCOPES.includes(s)) : [...SCOPES];
}
