import { defaultScopes, SCOPES, type Scope } from './scopes';

/**
 * Roles a claim rule grants (docs/authorization.md#claim-rules): `owner` holds every scope, `member`
 * every scope but the credential ones (like a temporary key), `viewer` reads only.
 */
export const ROLES = {
  owner: [...SCOPES],
  member: defaultScopes('temporary'),
  viewer: ['tools:read', 'executions:read', 'workspaces:read'],
} as const satisfies Record<string, readonly Scope[]>;
export type Role = keyof typeof ROLES;

/** One rule: who it matches (a group the identity provider names, or a verified email's domain) and what they become. */
export type ClaimRule = ({ group: string } | { email_domain: string }) & { account: string; role: Role };

/** Who an identity provider says someone is: the claims the rules read. */
export interface IdentityClaims {
  email?: unknown;
  email_verified?: unknown;
  [claim: string]: unknown;
}

export interface RuleMatch {
  accountId: string;
  role: Role;
  scopes: readonly Scope[];
  /** Which rule matched (its index in the list), for the log and the membership record. */
  rule: number;
}

const MAX_RULES = 1000;
const ACCOUNT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Reads OIDC_RULES (a JSON array of rules); throws an Error naming the first thing wrong. */
export function parseClaimRules(text: string): ClaimRule[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`not JSON (${(err as Error).message})`);
  }
  if (!Array.isArray(parsed) || parsed.length === 0) throw new Error('must be a non-empty JSON array of rules');
  if (parsed.length > MAX_RULES) throw new Error(`at most ${MAX_RULES} rules`);
  return parsed.map((rule: unknown, index) => {
    const fail = (why: string) => new Error(`rule ${index}: ${why}`);
    if (rule === null || typeof rule !== 'object' || Array.isArray(rule)) throw fail('must be an object');
    const { group, email_domain: domain, account, role, ...rest } = rule as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length > 0) throw fail(`unknown field(s) ${unknown.join(', ')} (a rule has group or email_domain, account and role)`);
    if ((group === undefined) === (domain === undefined)) throw fail('give exactly one of group and email_domain');
    if (typeof account !== 'string' || !ACCOUNT_ID.test(account)) throw fail('account must be an account id');
    if (typeof role !== 'string' || !Object.hasOwn(ROLES, role)) throw fail(`role must be one of ${Object.keys(ROLES).join(', ')}`);
    if (group !== undefined) {
      if (typeof group !== 'string' || group.length === 0 || group.length > 256) throw fail('group must be a non-empty string');
      return { group, account, role: role as Role };
    }
    if (typeof domain !== 'string' || !/^[a-z0-9.-]+\.[a-z]{2,}$/i.test(domain)) throw fail('email_domain must be a domain name such as example.com');
    return { email_domain: domain.toLowerCase(), account, role: role as Role };
  });
}

/**
 * The first rule the claims match, or null. A group rule reads the `groupsClaim` (an array of
 * names, or one name); an email-domain rule needs `email_verified: true`, since an unverified
 * address is whatever the user typed.
 */
export function matchClaimRules(rules: readonly ClaimRule[], claims: IdentityClaims, groupsClaim: string): RuleMatch | null {
  const groupsValue = claims[groupsClaim];
  const groups = new Set((Array.isArray(groupsValue) ? groupsValue : [groupsValue]).filter((group): group is string => typeof group === 'string'));
  const domain = claims.email_verified === true && typeof claims.email === 'string' ? claims.email.slice(claims.email.lastIndexOf('@') + 1).toLowerCase() : null;
  const index = rules.findIndex((rule) => ('group' in rule ? groups.has(rule.group) : domain !== null && domain === rule.email_domain));
  if (index === -1) return null;
  const { account, role } = rules[index];
  return { accountId: account, role, scopes: ROLES[role], rule: index };
}
