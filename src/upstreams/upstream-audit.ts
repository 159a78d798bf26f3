import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Between, type EntityManager, type FindOptionsWhere, IsNull, LessThan, LessThanOrEqual, MoreThanOrEqual, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { currentExecution } from '../common/probes';
import { randomBase62 } from '../common/ids';
import { AppConfig } from '../config/app-config';
import { UpstreamAuditEvent, type UpstreamAuditAction } from './upstream-audit-event.entity';
import type { Upstream } from './upstream.entity';

/** Who the operator's commands are in the log. */
export const OPERATOR_ACTOR = 'operator';

/** One event as it is recorded: the upstream it is about, what happened, by whom. */
export interface AuditEntry {
  upstream: Pick<Upstream, 'id' | 'name' | 'account_id' | 'shared'>;
  action: UpstreamAuditAction;
  actor: string;
  details?: Record<string, unknown>;
}

/** Which events a read wants: an action, a time range, one upstream. */
export interface AuditFilter {
  action?: UpstreamAuditAction;
  since?: Date;
  until?: Date;
  upstreamId?: string;
}

/** An event as the API shows it. */
export function auditEventView(row: UpstreamAuditEvent): Record<string, unknown> {
  return {
    id: row.id,
    action: row.action,
    actor: row.actor,
    upstream_id: row.upstream_id,
    upstream: row.upstream_name,
    account_id: row.account_id,
    details: row.details,
    created_at: row.created_at.toISOString(),
  };
}

/**
 * The upstreams' audit log (docs/upstreams.md#audit-log). A change's event is written in the
 * change's transaction, so neither is kept without the other; a call's after the call (a failed
 * write is logged as an error, the call's answer stands). Events about an operator-wide upstream's
 * registration belong to no account; a call's belongs to the calling account. Worker processes
 * prune events older than UPSTREAM_AUDIT_RETENTION_DAYS every RETENTION_INTERVAL_SECONDS.
 */
@Injectable()
export class UpstreamAudit implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(UpstreamAudit.name);
  private timer?: NodeJS.Timeout;

  constructor(
    @InjectRepository(UpstreamAuditEvent) private readonly events: Repository<UpstreamAuditEvent>,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    const every = this.config.RETENTION_INTERVAL_SECONDS * 1000;
    if (every === 0 || !this.config.runsWorker) return;
    // Deletes are idempotent, so several workers pruning is harmless.
    this.timer = setInterval(() => void this.pruneLogged(), every).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** Writes the event with `manager`: the change's own transaction. */
  async record(manager: EntityManager, entry: AuditEntry, now = new Date()): Promise<void> {
    const { upstream } = entry;
    const row: QueryDeepPartialEntity<UpstreamAuditEvent> = {
      id: `uae_${randomBase62(24)}`,
      account_id: upstream.shared ? null : upstream.account_id,
      actor: entry.actor,
      action: entry.action,
      upstream_id: upstream.id,
      upstream_name: upstream.name,
      details: (entry.details ?? {}) as never, // jsonb: stored as it is
      created_at: now,
    };
    await manager.insert(UpstreamAuditEvent, row);
  }

  /** A call of one of the upstream's tools, by the execution running it (src/common/probes.ts currentExecution). */
  async recordCall(upstream: Upstream, toolId: string, executionId: string, outcome: string, now = new Date()): Promise<void> {
    const running = currentExecution();
    const entry: AuditEntry = {
      // A call belongs to the caller's account, a shared upstream's included.
      upstream: { ...upstream, shared: false, account_id: running?.accountId ?? upstream.account_id },
      action: 'upstream.called',
      actor: running?.keyId ?? 'unknown',
      details: { tool_id: toolId, execution_id: executionId, outcome },
    };
    try {
      await this.record(this.events.manager, entry, now);
    } catch (err) {
      this.logger.error(`audit event upstream.called of ${upstream.id} (execution ${executionId}) not recorded: ${(err as Error).message}`);
    }
  }

  /**
   * A page of one account's events, or with null the operator-wide upstreams' own events (their
   * registration and changes, which belong to no account); newest first.
   */
  async page(accountId: string | null, filter: AuditFilter, limit: number, offset: number): Promise<{ events: Record<string, unknown>[]; total: number }> {
    const where: FindOptionsWhere<UpstreamAuditEvent> = {
      account_id: accountId ?? IsNull(),
      ...(filter.upstreamId && { upstream_id: filter.upstreamId }),
      ...(filter.action && { action: filter.action }),
      ...timeRange(filter),
    };
    const [rows, total] = await this.events.findAndCount({ where, order: { created_at: 'DESC', id: 'DESC' }, take: limit, skip: offset });
    return { events: rows.map(auditEventView), total };
  }

  /** Deletes events older than the retention; answers how many. */
  async prune(now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - this.config.UPSTREAM_AUDIT_RETENTION_DAYS * 86_400_000);
    return (await this.events.delete({ created_at: LessThan(before) })).affected ?? 0;
  }

  private async pruneLogged(): Promise<void> {
    try {
      const pruned = await this.prune();
      if (pruned > 0) this.logger.log(`Pruned ${pruned} upstream audit event(s) past UPSTREAM_AUDIT_RETENTION_DAYS`);
    } catch (err) {
      this.logger.error(`Upstream audit pruning failed: ${(err as Error).message}`);
    }
  }
}

function timeRange(filter: AuditFilter): Pick<FindOptionsWhere<UpstreamAuditEvent>, 'created_at'> {
  if (filter.since && filter.until) return { created_at: Between(filter.since, filter.until) };
  if (filter.since) return { created_at: MoreThanOrEqual(filter.since) };
  if (filter.until) return { created_at: LessThanOrEqual(filter.until) };
  return {};
}
