import { Injectable } from '@nestjs/common';
import { AppException } from '../../common/errors';
import { Execution, TERMINAL_STATUSES } from '../engine/execution.entity';
import { ExecutionRunner } from '../engine/execution-runner';
import { ExecutionEventBus, statusEvent } from '../engine/events/execution-events';
import { ExecutionReader, ExecutionsStore, ListFilter } from '../engine/executions.store';
import { pendingInputRequests } from './execution-views';
import { answersOf } from './input-rounds';

/** Reads and cancels executions within one account, of the tools the calling key may use. */
@Injectable()
export class ExecutionsService {
  constructor(
    private readonly store: ExecutionsStore,
    private readonly runner: ExecutionRunner,
    private readonly events: ExecutionEventBus,
  ) {}

  get(reader: ExecutionReader, id: string): Promise<Execution> {
    return this.store.get(reader, id);
  }

  /** An offset page, its total, and the last id when more follow (a cursor that continues it). */
  async page(reader: ExecutionReader, filter: ListFilter, limit: number, offset: number) {
    const { executions, total } = await this.store.page(reader, filter, limit, offset);
    return { executions, total, next: offset + executions.length < total && executions.length > 0 ? executions[executions.length - 1].id : null };
  }

  async pageAfter(reader: ExecutionReader, filter: ListFilter, afterId: string | null, limit: number) {
    const [{ executions, hasMore }, total] = await Promise.all([this.store.pageAfter(reader, filter, afterId, limit), this.store.count(reader, filter)]);
    return { executions, total, next: hasMore ? executions[executions.length - 1].id : null };
  }

  /**
   * Answers the questions an async execution waits on (by key; answers to other keys, and ones
   * that are not objects, are left out); once all are answered it runs again with them.
   */
  async answer(reader: ExecutionReader, id: string, responses: Record<string, unknown>): Promise<Execution> {
    const current = await this.store.get(reader, id);
    if (current.status !== 'input_required') throw new AppException('CONFLICT', `Execution ${id} is not waiting for input (status '${current.status}')`);
    const pending = pendingInputRequests(current);
    const accepted = answersOf(responses, pending);
    if (Object.keys(accepted).length === 0) {
      throw AppException.invalidRequest('input_responses answers none of the questions the execution waits on', { parameter: 'input_responses', expected: Object.keys(pending) });
    }
    if (current.kind !== 'workflow') return this.runner.answer(current, accepted);
    // A run waits on one of its steps (docs/workflows.md#asking-for-input): the answers are that step's.
    const step = (await this.store.children(id)).find((child) => child.status === 'input_required');
    if (!step) throw new AppException('CONFLICT', `Execution ${id} is not waiting for input`);
    const answered = await this.runner.answer(step, accepted);
    if (answered.status !== 'queued') return this.store.get(reader, id);
    // The step runs again: so does the run (its engine asks again if another step still waits).
    const resumed = await this.store.resumeWaiting(id);
    if (resumed) this.events.publish(statusEvent(resumed));
    return resumed ?? this.store.get(reader, id);
  }

  /** docs/API.md#execution-lifecycle: active → cancelled; cancelled again → the same answer; otherwise finished → 409. */
  async cancel(reader: ExecutionReader, id: string): Promise<Execution> {
    const current = await this.store.get(reader, id);
    if (current.status === 'cancelled') return current;
    if (TERMINAL_STATUSES.has(current.status)) {
      throw new AppException('CONFLICT', `Execution ${id} already finished with status '${current.status}'`);
    }
    const after = await this.runner.cancel(current);
    // A run's steps end with it; a step started meanwhile is cancelled by the run's engine (docs/workflows.md#cancelling).
    if (after.status === 'cancelled' && current.kind === 'workflow') await this.cancelSteps(id);
    if (after.status !== 'cancelled') {
      throw new AppException('CONFLICT', `Execution ${id} already finished with status '${after.status}'`);
    }
    return after;
  }

  /** Cancels a workflow run's steps still active; answers how many. */
  async cancelSteps(runId: string): Promise<number> {
    const active = (await this.store.children(runId)).filter((child) => !TERMINAL_STATUSES.has(child.status));
    const ended = await Promise.all(active.map((child) => this.runner.cancel(child)));
    return ended.filter((child) => child.status === 'cancelled').length;
  }
}
