import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Account } from '../keys/account.entity';

/** One account's secret, encrypted (AES-256-GCM); the value is never stored or returned in clear. */
@Entity('account_secrets')
export class AccountSecret {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_account_secrets' })
  account_id: string;

  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_account_secrets' })
  name: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_account_secrets_account' })
  account?: Account;

  /** Which SECRETS_KEY sealed it (a fingerprint of the key), so the key can rotate. */
  @Column('text')
  key_id: string;

  /** base64 of iv (12 bytes) ‖ ciphertext ‖ tag (16 bytes). */
  @Column('text')
  sealed: string;

  @Column('timestamptz')
  created_at: Date;

  @Column('timestamptz')
  updated_at: Date;
}
