import { matchClaimRules, parseClaimRules, ROLES } from './claim-rules';
import { SCOPES } from './scopes';

const RULES = parseClaimRules(
  JSON.stringify([
    { group: 'platform-admins', account: 'acct_platform', role: 'owner' },
    { email_domain: 'Example.com', account: 'acct_example', role: 'viewer' },
    { group: 'developers', account: 'acct_platform', role: 'member' },
  ]),
);

describe('claim rules', () => {
  it('maps a group claim to its account and role, the first matching rule winning', () => {
    expect(matchClaimRules(RULES, { groups: ['developers', 'platform-admins'] }, 'groups')).toEqual({ accountId: 'acct_platform', role: 'owner', scopes: [...SCOPES], rule: 0 });
    expect(matchClaimRules(RULES, { groups: 'developers' }, 'groups')).toMatchObject({ role: 'member', rule: 2 });
    expect(matchClaimRules(RULES, { roles: ['developers'] }, 'roles')).toMatchObject({ role: 'member' });
    expect(matchClaimRules(RULES, { groups: ['developers'] }, 'roles')).toBeNull();
  });

  it('maps a verified email by its domain, case-insensitively, and never an unverified one', () => {
    expect(matchClaimRules(RULES, { email: 'Ann@EXAMPLE.com', email_verified: true }, 'groups')).toMatchObject({ accountId: 'acct_example', role: 'viewer', scopes: ROLES.viewer });
    expect(matchClaimRules(RULES, { email: 'ann@example.com' }, 'groups')).toBeNull();
    expect(matchClaimRules(RULES, { email: 'ann@example.com', email_verified: 'true' }, 'groups')).toBeNull();
    expect(matchClaimRules(RULES, { email: 'ann@notexample.com', email_verified: true }, 'groups')).toBeNull();
    expect(matchClaimRules(RULES, { email: 'ann@example.com.evil.io', email_verified: true }, 'groups')).toBeNull();
  });

  it('gives the member role no credential scopes and the viewer role no writes', () => {
    expect(ROLES.member).not.toContain('keys:manage');
    expect(ROLES.member).toContain('tools:invoke');
    expect(ROLES.viewer).not.toContain('tools:invoke');
  });

  it.each([
    ['{', /not JSON/],
    ['[]', /non-empty JSON array/],
    ['{"group":"a"}', /non-empty JSON array/],
    ['[1]', /rule 0: must be an object/],
    ['[{"group":"a","email_domain":"b.com","account":"acct_1","role":"owner"}]', /exactly one of group and email_domain/],
    ['[{"account":"acct_1","role":"owner"}]', /exactly one of group and email_domain/],
    ['[{"group":"a","account":"acct 1","role":"owner"}]', /account must be an account id/],
    ['[{"group":"a","account":"acct_1","role":"admin"}]', /role must be one of owner, member, viewer/],
    ['[{"group":"a","account":"acct_1","role":"toString"}]', /role must be one of/],
    ['[{"group":"","account":"acct_1","role":"owner"}]', /group must be a non-empty string/],
    ['[{"email_domain":"@example.com","account":"acct_1","role":"owner"}]', /email_domain must be a domain name/],
    ['[{"group":"a","account":"acct_1","role":"owner","scopes":["keys:manage"]}]', /unknown field\(s\) scopes/],
  ])('refuses %s', (text, message) => {
    expect(() => parseClaimRules(text)).toThrow(message);
  });
});
