import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Account } from '../keys/account.entity';
import { AccountMember } from './account-member.entity';
import type { Scope } from '../identity/scopes';

/** A signed-in console: the browser holds the secret in a cookie, the database its SHA-256. */
@Entity('console_sessions')
@Index('ix_console_sessions_account', ['account_id', 'created_at'])
@Index('ix_console_sessions_expires', ['expires_at'])
export class ConsoleSession {
  /** `ses_` + base62: names the session in lists and in the request log, in place of a key id. */
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_console_sessions' })
  id: string;

  @Index('uq_console_sessions_secret_hash', { unique: true })
  @Column('text')
  secret_hash: string;

  @Column('text')
  account_id: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_console_sessions_account' })
  account?: Account;

  @Column('text', { array: true })
  scopes: Scope[];

  @Column('text', { array: true, nullable: true })
  tool_ids: string[] | null;

  /** The link it was opened with; null for a single sign-on. */
  @Column('text', { nullable: true })
  link_id: string | null;

  /** The member a single sign-on opened it for: removing the member ends the session. */
  @Column('text', { nullable: true })
  member_id: string | null;

  @ManyToOne(() => AccountMember, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'member_id', foreignKeyConstraintName: 'fk_console_sessions_member' })
  member?: AccountMember;

  @Column('text', { nullable: true })
  user_agent: string | null;

  @Column('timestamptz')
  created_at: Date;

  /** Idle expiry counts from here; written at most every TOUCH_EVERY_MS. */
  @Column('timestamptz')
  last_seen_at: Date;

  /** The absolute expiry. */
  @Column('timestamptz')
  expires_at: Date;

  @Column('timestamptz', { nullable: true })
  revoked_at: Date | null;
}
