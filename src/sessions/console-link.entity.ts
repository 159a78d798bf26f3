import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Account } from '../keys/account.entity';
import type { Scope } from '../identity/scopes';

/** A one-time console sign-in link; only the SHA-256 of its token is stored. */
@Entity('console_links')
@Index('ix_console_links_expires', ['expires_at'])
export class ConsoleLink {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_console_links' })
  id: string;

  @Index('uq_console_links_token_hash', { unique: true })
  @Column('text')
  token_hash: string;

  @Column('text')
  account_id: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_console_links_account' })
  account?: Account;

  /** What the session it opens may do: never more than whoever asked for the link held. */
  @Column('text', { array: true })
  scopes: Scope[];

  @Column('text', { array: true, nullable: true })
  tool_ids: string[] | null;

  /** The key that asked for it, or `operator` (the CLI). */
  @Column('text')
  created_by: string;

  @Column('timestamptz')
  created_at: Date;

  @Column('timestamptz')
  expires_at: Date;

  @Column('timestamptz', { nullable: true })
  used_at: Date | null;
}
