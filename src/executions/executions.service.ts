import { Injectable } from '@nestjs/common';
import { AppException } from '../common/errors';
import { Execution, TERMINAL_STATUSES } from './execution.entity';
import { ExecutionRunner } from './execution-runner';
import { ExecutionsStore, ListFilter } from './executions.store';

/** Reads and cancels executions within one account. */
@Injectable()
export class ExecutionsService {
  constructor(
    private readonly store: ExecutionsStore,
    private readonly runner: ExecutionRunner,
  ) {}

  get(accountId: string, id: string): Promise<Execution> {
    return this.store.get(accountId, id);
  }

  page(accountId: string, filter: ListFilter, limit: number, offset: number) {
    return this.store.page(accountId, filter, limit, offset);
  }

  async pageAfter(accountId: string, filter: ListFilter, afterId: string | null, limit: number) {
    const { executions, hasMore } = await this.store.pageAfter(accountId, filter, afterId, limit);
    return { executions, next: hasMore ? executions[executions.length - 1].id : null };
  }

  /** DESIGN §5.8: active → cancelled; cancelled again → the same answer; otherwise finished → 409. */
  async cancel(accountId: string, id: string): Promise<Execution> {
    const current = await this.store.get(accountId, id);
    if (current.status === 'cancelled') return current;
    if (TERMINAL_STATUSES.has(current.status)) {
      throw new AppException('CONFLICT', `Execution ${id} already finished with status '${current.status}'`);
    }
    const after = await this.runner.cancel(current);
    if (after.status !== 'cancelled') {
      throw new AppException('CONFLICT', `Execution ${id} already finished with status '${after.status}'`);
    }
    return after;
  }
}
