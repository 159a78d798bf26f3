export const SCOPES = ['tools:read', 'tools:invoke', 'executions:read', 'executions:cancel', 'keys:manage'] as const;
export type Scope = (typeof SCOPES)[number];

/** DESIGN §5.7: user and service keys hold every scope; temporary keys all but keys:manage. */
export function defaultScopes(type: 'user' | 'service' | 'temporary'): Scope[] {
  return type === 'temporary' ? SCOPES.filter((s) => s !== 'keys:manage') : [...SCOPES];
}
