import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { FindOptionsWhere, In, LessThan, MoreThanOrEqual, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { AppException } from '../common/errors';
import { TIER_LIMITS } from '../keys/tiers';
import { Execution, ExecutionStatus } from './execution.entity';

const ACTIVE: ExecutionStatus[] = ['queued', 'running'];

export type TerminalFields = Pick<Execution, 'status' | 'result' | 'error'> & { completed_at: Date };

export interface ListFilter {
  status?: ExecutionStatus;
  tool_id?: string;
}

/** Execution rows; every transition out of an active state is conditional, so the first terminal state wins. */
@Injectable()
export class ExecutionsStore {
  constructor(@InjectRepository(Execution) private readonly executions: Repository<Execution>) {}

  async insert(execution: Execution): Promise<void> {
    await this.executions.insert(execution as QueryDeepPartialEntity<Execution>);
  }

  /** Moves an active execution to its terminal state in one statement; answers the row as it ends up. */
  async finish(id: string, fields: TerminalFields, startedAt: Date | null): Promise<Execution> {
    const update = {
      ...fields,
      duration_ms: startedAt ? fields.completed_at.getTime() - startedAt.getTime() : null,
      ...(fields.status === 'success' && { progress: 100 }),
    };
    const { raw } = await this.executions
      .createQueryBuilder()
      .update()
      .set(update as QueryDeepPartialEntity<Execution>)
      .where('id = :id AND status IN (:...active)', { id, active: ACTIVE })
      .returning('*')
      .execute();
    const rows = raw as Execution[];
    return rows.length > 0 ? this.executions.create(rows[0]) : this.executions.findOneByOrFail({ id });
  }

  /** queued → running; null when the execution is no longer queued (cancelled, or taken already). */
  async start(id: string, now: Date): Promise<Execution | null> {
    const { raw } = await this.executions
      .createQueryBuilder()
      .update()
      .set({ status: 'running', started_at: now })
      .where("id = :id AND status = 'queued'", { id })
      .returning('*')
      .execute();
    const rows = raw as Execution[];
    return rows.length > 0 ? this.executions.create(rows[0]) : null;
  }

  /** Executions of an account created since `since` (seeds the monthly quota). */
  countSince(accountId: string, since: Date): Promise<number> {
    return this.executions.countBy({ account_id: accountId, created_at: MoreThanOrEqual(since) });
  }

  find(id: string): Promise<Execution | null> {
    return this.executions.findOneBy({ id });
  }

  /** Executions left active by a process that stopped, oldest first (embedded recovery). */
  active(): Promise<Execution[]> {
    return this.executions.find({ where: { status: In(ACTIVE) }, order: { id: 'ASC' } });
  }

  /**
   * Deletes executions older than their account's retention (DESIGN §5.17): the account's own
   * number, else its tier's. Returns how many were deleted.
   */
  async purgeExpired(now: Date): Promise<number> {
    const days = Object.entries(TIER_LIMITS).map(([tier, limits]) => `WHEN '${tier}' THEN ${limits.retentionDays}`).join(' ');
    const result = await this.executions.query(
      `DELETE FROM executions e USING accounts a
        WHERE e.account_id = a.id
          AND e.created_at < $1::timestamptz - make_interval(days => COALESCE(a.retention_days, CASE a.tier ${days} END))`,
      [now.toISOString()],
    );
    return (result as [unknown, number])[1] ?? 0;
  }

  async recordProgress(id: string, progress: number, message: string | null): Promise<void> {
    await this.executions.update({ id, status: 'running' }, { progress, progress_message: message });
  }

  async get(accountId: string, id: string): Promise<Execution> {
    const execution = await this.executions.findOneBy({ id, account_id: accountId });
    if (!execution) throw AppException.notFound('Execution', id);
    return execution;
  }

  async page(accountId: string, filter: ListFilter, limit: number, offset: number): Promise<{ executions: Execution[]; total: number }> {
    const [executions, total] = await this.executions.findAndCount({
      where: this.where(accountId, filter),
      order: { id: 'DESC' },
      take: limit,
      skip: offset,
    });
    return { executions, total };
  }

  /** Keyset page, newest first: ids are time-ordered, so new executions never shift the walk. */
  async pageAfter(accountId: string, filter: ListFilter, afterId: string | null, limit: number): Promise<{ executions: Execution[]; hasMore: boolean }> {
    const rows = await this.executions.find({
      where: { ...this.where(accountId, filter), ...(afterId && { id: LessThan(afterId) }) },
      order: { id: 'DESC' },
      take: limit + 1,
    });
    return { executions: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  private where(accountId: string, filter: ListFilter): FindOptionsWhere<Execution> {
    return {
      account_id: accountId,
      ...(filter.status && { status: filter.status }),
      ...(filter.tool_id && { tool_id: filter.tool_id }),
    };
  }
}
