import { Column, CreateDateColumn, Entity, Index, ManyToOne, JoinColumn, PrimaryColumn } from 'typeorm';
import { Account } from './account.entity';
import type { KeyType } from '../identity/key-secret';
import type { Scope } from '../identity/scopes';

@Entity('api_keys')
@Index('idx_api_keys_account', ['account_id', 'created_at'])
export class ApiKey {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_api_keys' })
  id: string;

  @Column('text')
  account_id: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_api_keys_account' })
  account?: Account;

  @Column('text')
  name: string;

  @Column('text')
  type: KeyType;

  /** First 12 characters of the secret, to recognise a key without storing it. */
  @Column('text')
  prefix: string;

  @Column('text')
  last4: string;

  /** SHA-256 hex of the secret; the secret itself is never stored. */
  @Index('uq_api_keys_secret_hash', { unique: true })
  @Column('text')
  secret_hash: string;

  @Column('text', { array: true })
  scopes: Scope[];

  /** Tools this key may use; null = all. */
  @Column('text', { array: true, nullable: true })
  tool_ids: string[] | null;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @Column('timestamptz', { nullable: true })
  expires_at: Date | null;

  /** May lie in the future: a rotated service key stays valid until then. */
  @Column('timestamptz', { nullable: true })
  revoked_at: Date | null;

  @Column('timestamptz', { nullable: true })
  last_used_at: Date | null;

  /**
   * Set when the key requires signed requests (docs/API.md#signed-requests): its signing secret,
   * sealed (src/keys/signing-secret-vault.ts), and which secrets key sealed it.
   */
  @Column('text', { nullable: true })
  signing_secret_sealed: string | null;

  @Column('text', { nullable: true })
  signing_secret_key_id: string | null;

  /** The key this one was regenerated or rotated from. */
  @Column('text', { nullable: true })
  replaces_key_id: string | null;
}
