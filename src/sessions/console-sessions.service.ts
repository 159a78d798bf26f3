import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, LessThan, MoreThan, Repository } from 'typeorm';
import { AppException } from '../common/errors';
import { randomBase62 } from '../common/ids';
import { AppConfig } from '../config/app-config';
import { hashSecret } from '../identity/key-secret';
import type { Principal } from '../identity/principal';
import { SCOPES, type Scope } from '../identity/scopes';
import { accountLimits } from '../keys/account.entity';
import type { Grantor } from '../keys/api-keys.service';
import type { AccountMember } from './account-member.entity';
import { ConsoleLink } from './console-link.entity';
import { ConsoleSession } from './console-session.entity';
import { newConsoleSecret } from './console-credentials';

/** last_seen_at is written at most this often per session: idle expiry needs no finer grain. */
const TOUCH_EVERY_MS = 30_000;
const MAX_USER_AGENT = 200;

export interface IssuedLink {
  id: string;
  /** Where the account holder opens it; the token sits in the fragment, so no server or proxy logs it. */
  url: string;
  path: string;
  expires_at: Date;
}

export interface OpenedSession {
  session: ConsoleSession;
  /** Goes into the cookie once; only its SHA-256 is stored. */
  secret: string;
}

export type SessionCheck = { ok: true; principal: Principal; session: ConsoleSession } | { ok: false; reason: string };

/**
 * Console sign-in (docs/console.md): one-time links that open database-held sessions. A session acts as
 * its account's principal with the scopes and tools of whoever asked for the link, never more.
 */
@Injectable()
export class ConsoleSessions {
  constructor(
    @InjectRepository(ConsoleLink) private readonly links: Repository<ConsoleLink>,
    @InjectRepository(ConsoleSession) private readonly sessions: Repository<ConsoleSession>,
    private readonly config: AppConfig,
  ) {}

  /** `grantor` is the key that asks (its scopes and tools bound the session); none for the operator CLI. */
  async createLink(accountId: string, grantor: (Grantor & { keyId: string }) | null, now = new Date()): Promise<IssuedLink> {
    await this.purgeExpired(now);
    const token = newConsoleSecret();
    const link = this.links.create({
      id: `lnk_${randomBase62(20)}`,
      token_hash: hashSecret(token),
      account_id: accountId,
      scopes: grantor ? [...grantor.scopes] : [...SCOPES],
      tool_ids: grantor?.toolIds ? [...grantor.toolIds] : null,
      created_by: grantor?.keyId ?? 'operator',
      created_at: now,
      expires_at: new Date(now.getTime() + this.config.CONSOLE_LINK_TTL_SECONDS * 1000),
      used_at: null,
    });
    await this.links.insert(link);
    const path = `/console#/sign-in/${token}`;
    return { id: link.id, url: `${this.config.publicUrl}${path}`, path, expires_at: link.expires_at };
  }

  /** Spends a link (once: the conditional update lets one caller win) and opens its session. */
  async redeem(token: string, userAgent: string | undefined, now = new Date()): Promise<OpenedSession> {
    const { raw } = await this.links
      .createQueryBuilder()
      .update()
      .set({ used_at: now })
      .where('token_hash = :hash AND used_at IS NULL AND expires_at > :now', { hash: hashSecret(token), now })
      .returning('*')
      .execute();
    const link = (raw as ConsoleLink[])[0];
    if (!link) throw await this.refusal(token);
    return this.open({ account_id: link.account_id, scopes: link.scopes, tool_ids: link.tool_ids, link_id: link.id, member_id: null }, userAgent, now);
  }

  /** A session for a member a single sign-on admitted, with their role's scopes. */
  openForMember(member: AccountMember, scopes: readonly Scope[], userAgent: string | undefined, now = new Date()): Promise<OpenedSession> {
    return this.open({ account_id: member.account_id, scopes: [...scopes], tool_ids: null, link_id: null, member_id: member.id }, userAgent, now);
  }

  private async open(grant: Pick<ConsoleSession, 'account_id' | 'scopes' | 'tool_ids' | 'link_id' | 'member_id'>, userAgent: string | undefined, now: Date): Promise<OpenedSession> {
    const secret = newConsoleSecret();
    const session = this.sessions.create({
      ...grant,
      id: `ses_${randomBase62(20)}`,
      secret_hash: hashSecret(secret),
      user_agent: userAgent?.slice(0, MAX_USER_AGENT) ?? null,
      created_at: now,
      last_seen_at: now,
      expires_at: new Date(now.getTime() + this.config.CONSOLE_SESSION_MAX_SECONDS * 1000),
      revoked_at: null,
    });
    await this.sessions.insert(session);
    return { session, secret };
  }

  /** The session behind a cookie's secret, as a principal, if it is still open. Keeps it awake. */
  async verify(secret: string, now = new Date()): Promise<SessionCheck> {
    const session = await this.sessions.findOne({ where: { secret_hash: hashSecret(secret) }, relations: { account: true } });
    if (!session?.account) return { ok: false, reason: 'Unknown console session: sign in with a new link' };
    if (session.revoked_at) return { ok: false, reason: 'This console session was signed out or revoked: sign in with a new link' };
    if (session.expires_at <= now || this.idleUntil(session) <= now) return { ok: false, reason: 'This console session has expired: sign in with a new link' };
    if (now.getTime() - session.last_seen_at.getTime() >= TOUCH_EVERY_MS) {
      session.last_seen_at = now;
      await this.sessions.update({ id: session.id }, { last_seen_at: now });
    }
    const { account } = session;
    return {
      ok: true,
      session,
      principal: {
        keyId: session.id,
        keyType: 'session',
        accountId: account.id,
        tier: account.tier,
        limits: accountLimits(account),
        scopes: new Set(session.scopes),
        toolIds: session.tool_ids ? new Set(session.tool_ids) : null,
        expiresAt: session.expires_at,
        revokedAt: null,
      },
    };
  }

  /** One of the account's sessions, with its account. */
  async get(accountId: string, sessionId: string): Promise<ConsoleSession> {
    const session = await this.sessions.findOne({ where: { id: sessionId, account_id: accountId }, relations: { account: true } });
    if (!session) throw AppException.notFound('Console session', sessionId);
    return session;
  }

  /** When the session ends if nothing else happens. */
  idleUntil(session: ConsoleSession): Date {
    return new Date(session.last_seen_at.getTime() + this.config.CONSOLE_SESSION_IDLE_SECONDS * 1000);
  }

  /** The account's open sessions, newest first. */
  listOpen(accountId: string, now = new Date()): Promise<ConsoleSession[]> {
    return this.sessions.find({
      where: { account_id: accountId, revoked_at: IsNull(), expires_at: MoreThan(now), last_seen_at: MoreThan(new Date(now.getTime() - this.config.CONSOLE_SESSION_IDLE_SECONDS * 1000)) },
      order: { created_at: 'DESC' },
    });
  }

  /** Ends a session of the account (sign-out, or revocation from another session or key). Twice is fine. */
  async revoke(accountId: string, sessionId: string, now = new Date()): Promise<ConsoleSession> {
    const session = await this.sessions.findOneBy({ id: sessionId, account_id: accountId });
    if (!session) throw AppException.notFound('Console session', sessionId);
    if (!session.revoked_at) {
      session.revoked_at = now;
      await this.sessions.update({ id: session.id }, { revoked_at: now });
    }
    return session;
  }

  private async refusal(token: string): Promise<AppException> {
    const link = await this.links.findOneBy({ token_hash: hashSecret(token) });
    const why = !link ? 'is unknown' : link.used_at ? 'was used already' : 'has expired';
    return new AppException('UNAUTHORIZED', `This sign-in link ${why}: ask for a new one (they work once, for a few minutes)`);
  }

  /** Expired rows are useless: dropped whenever a link is made, so the tables stay small without a job. */
  private async purgeExpired(now: Date): Promise<void> {
    await this.links.delete({ expires_at: LessThan(now) });
    await this.sessions.delete({ expires_at: LessThan(now) });
  }
}
