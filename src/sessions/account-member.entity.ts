import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Account } from '../keys/account.entity';
import type { Role } from '../identity/claim-rules';

/**
 * Someone the operator's identity provider signed in, made a member of the account a claim rule
 * mapped them to on their first sign-in (docs/authorization.md#single-sign-on).
 */
@Entity('account_members')
@Index('uq_account_members_identity', ['account_id', 'issuer', 'subject'], { unique: true })
@Index('ix_account_members_subject', ['issuer', 'subject'])
export class AccountMember {
  /** `mem_` + base62. */
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_account_members' })
  id: string;

  @Column('text')
  account_id: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_account_members_account' })
  account?: Account;

  /** The identity provider, and the user's `sub` there: together, who they are. */
  @Column('text')
  issuer: string;

  @Column('text')
  subject: string;

  /** As the provider last said; shown in lists, never used to match. */
  @Column('text', { nullable: true })
  email: string | null;

  /** The role of the rule that matched at the last sign-in. */
  @Column('text')
  role: Role;

  @Column('timestamptz')
  created_at: Date;

  @Column('timestamptz')
  last_sign_in_at: Date;
}
