import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIER_LIMITS, Tier, TierLimits } from '../identity/tiers';

@Entity('accounts')
export class Account {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_accounts' })
  id: string;

  @Index('uq_accounts_name', { unique: true })
  @Column('text')
  name: string;

  @Column('text')
  tier: Tier;

  /** Enterprise overrides of the tier's numbers (docs/API.md#rate-limits-and-quotas); null = the tier's. */
  @Column('integer', { nullable: true })
  requests_per_minute: number | null;

  @Column('integer', { nullable: true })
  monthly_calls: number | null;

  @Column('integer', { nullable: true })
  retention_days: number | null;

  @Column('integer', { nullable: true })
  workspaces: number | null;

  @Column('bigint', { nullable: true, transformer: { to: (value: number | null) => value, from: (value: string | null) => (value === null ? null : Number(value)) } })
  workspace_bytes: number | null;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;
}

/** The limits in force for an account: its own numbers where set, else its tier's. */
export function accountLimits(account: Account): TierLimits {
  const tier = TIER_LIMITS[account.tier];
  return {
    requestsPerMinute: account.requests_per_minute ?? tier.requestsPerMinute,
    monthlyCalls: account.monthly_calls ?? tier.monthlyCalls,
    retentionDays: account.retention_days ?? tier.retentionDays,
    workspaces: account.workspaces ?? tier.workspaces,
    workspaceBytes: account.workspace_bytes ?? tier.workspaceBytes,
  };
}
