export const TIERS = ['free', 'pro', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

export interface TierLimits {
  /** Requests per rolling minute per API key. */
  requestsPerMinute: number;
  /** Invocations per calendar month per account; null = no cap. */
  monthlyCalls: number | null;
  /** Days execution records are kept. */
  retentionDays: number;
  /** Live (unexpired) uploaded workspaces per account. */
  workspaces: number;
  /** Bytes of archives those workspaces store, per account (what the database holds for them). */
  workspaceBytes: number;
}

export interface OrchestrationLimits {
  /** Schedules one account may hold. */
  schedules: number;
  /** Triggers one account may hold. */
  triggers: number;
  /** The shortest interval, in seconds, between two runs of one schedule. */
  scheduleMinIntervalSeconds: number;
}

const MIB = 1024 * 1024;

/** Enterprise accounts may carry their own numbers; these apply when unset. */
export const TIER_LIMITS: Record<Tier, TierLimits> = {
  free: { requestsPerMinute: 100, monthlyCalls: 1_000, retentionDays: 30, workspaces: 10, workspaceBytes: 100 * MIB },
  pro: { requestsPerMinute: 1_000, monthlyCalls: 100_000, retentionDays: 90, workspaces: 100, workspaceBytes: 2048 * MIB },
  enterprise: { requestsPerMinute: 10_000, monthlyCalls: null, retentionDays: 365, workspaces: 1_000, workspaceBytes: 20_480 * MIB },
};

/** SQL: the retention in days of the account row `account` (its own number, else its tier's); docs/API.md#execution-lifecycle. */
/** docs/orchestration.md#limits: by tier, for every account of the tier. */
export const ORCHESTRATION_LIMITS: Record<Tier, OrchestrationLimits> = {
  free: { schedules: 5, triggers: 5, scheduleMinIntervalSeconds: 900 },
  pro: { schedules: 100, triggers: 100, scheduleMinIntervalSeconds: 60 },
  enterprise: { schedules: 1_000, triggers: 1_000, scheduleMinIntervalSeconds: 10 },
};

export function retentionDaysSql(account: string): string {
  const days = Object.entries(TIER_LIMITS).map(([tier, limits]) => `WHEN '${tier}' THEN ${limits.retentionDays}`).join(' ');
  return `COALESCE(${account}.retention_days, CASE ${account}.tier ${days} END)`;
}
