import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Not, Repository } from 'typeorm';
import { AppException } from '../common/errors';
import { randomBase62 } from '../common/ids';
import type { RuleMatch } from '../identity/claim-rules';
import { Account } from '../keys/account.entity';
import { iso } from '../keys/key-view';
import { AccountMember } from './account-member.entity';

/** Who the identity provider signed in. */
export interface SignedInIdentity {
  issuer: string;
  subject: string;
  email: string | null;
}

const MAX_EMAIL = 320;

/**
 * Just-in-time membership (docs/authorization.md#single-sign-on): a single sign-on makes the user a
 * member of the account its claim rule maps them to, once; a sign-in no rule matches any more ends
 * every membership (and with it every session) that user held.
 */
@Injectable()
export class AccountMembers {
  constructor(@InjectRepository(AccountMember) private readonly members: Repository<AccountMember>) {}

  /**
   * The user's membership of the matched account, made on the first sign-in, refreshed on the next
   * (`joined` says which); null when the rule names an account that does not exist.
   */
  async admit(identity: SignedInIdentity, match: RuleMatch, now = new Date()): Promise<{ member: AccountMember; joined: boolean } | null> {
    const email = identity.email?.slice(0, MAX_EMAIL) ?? null;
    return this.members.manager.transaction(async (manager) => {
      if (!(await manager.existsBy(Account, { id: match.accountId }))) return null;
      // A user the rules now map elsewhere is no longer a member where they were.
      await manager.delete(AccountMember, { issuer: identity.issuer, subject: identity.subject, account_id: Not(match.accountId) });
      const { raw } = await manager
        .createQueryBuilder()
        .insert()
        .into(AccountMember)
        .values({ id: `mem_${randomBase62(20)}`, account_id: match.accountId, issuer: identity.issuer, subject: identity.subject, email, role: match.role, created_at: now, last_sign_in_at: now })
        .orIgnore()
        .returning('*')
        .execute();
      const inserted = (raw as AccountMember[])[0];
      if (inserted) return { member: inserted, joined: true };
      await manager.update(AccountMember, { account_id: match.accountId, issuer: identity.issuer, subject: identity.subject }, { email, role: match.role, last_sign_in_at: now });
      const member = await manager.findOneByOrFail(AccountMember, { account_id: match.accountId, issuer: identity.issuer, subject: identity.subject });
      return { member, joined: false };
    });
  }

  /** The user matched no rule: every membership they held ends, and their console sessions with it (ON DELETE CASCADE). */
  async expel(issuer: string, subject: string): Promise<number> {
    const { affected } = await this.members.delete({ issuer, subject });
    return affected ?? 0;
  }

  async list(accountId: string): Promise<AccountMember[]> {
    return this.members.find({ where: { account_id: accountId }, order: { created_at: 'ASC' } });
  }

  /** Removes a member of the account; their sessions end with it. They are back on their next sign-in if a rule still maps them. */
  async remove(accountId: string, memberId: string): Promise<void> {
    const { affected } = await this.members.delete({ id: memberId, account_id: accountId });
    if (!affected) throw AppException.notFound('Member', memberId);
  }
}

/** A member as lists show it. */
export function memberView(member: AccountMember) {
  return { id: member.id, issuer: member.issuer, subject: member.subject, email: member.email, role: member.role, created_at: iso(member.created_at), last_sign_in_at: iso(member.last_sign_in_at) };
}
