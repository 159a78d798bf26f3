import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Account } from '../keys/account.entity';

/** An account's webhook endpoint: which events go where, signed with its secret (sealed, never stored in clear). */
@Entity('webhook_subscriptions')
@Index('idx_webhook_subscriptions_account', ['account_id', 'id'])
export class WebhookSubscription {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_webhook_subscriptions' })
  id: string;

  @Column('text')
  account_id: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_webhook_subscriptions_account' })
  account?: Account;

  @Column('text')
  url: string;

  @Column('text', { array: true })
  events: string[];

  /** Only these tools' executions; null = every tool. */
  @Column('text', { array: true, nullable: true })
  tool_ids: string[] | null;

  @Column('text', { nullable: true })
  description: string | null;

  @Column('boolean', { default: true })
  enabled: boolean;

  /** Why the service disabled it (410 Gone, the retry schedule exhausted); null when enabled or disabled by its owner. */
  @Column('text', { nullable: true })
  disabled_reason: string | null;

  /** Which SECRETS_KEY sealed the signing secret, and the sealed secret (docs/API.md#webhooks). */
  @Column('text')
  secret_key_id: string;

  @Column('text')
  secret_sealed: string;

  /** The secret before the last rotation: it signs beside the new one until `previous_secret_expires_at`. */
  @Column('text', { nullable: true })
  previous_secret_key_id: string | null;

  @Column('text', { nullable: true })
  previous_secret_sealed: string | null;

  @Column('timestamptz', { nullable: true })
  previous_secret_expires_at: Date | null;

  @Column('timestamptz')
  created_at: Date;

  @Column('timestamptz')
  updated_at: Date;
}
