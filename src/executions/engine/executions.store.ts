import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityNotFoundError, FindOptionsWhere, In, LessThan, MoreThanOrEqual, Repository } from 'typeorm';
import { AppException, type ErrorBody } from '../../common/errors';
import { retentionDaysSql } from '../../identity/tiers';
import type { InputRequest } from '../../tools/sdk';
import { outboxInsert, triggerEventsInsert } from '../../webhooks/webhook-outbox';
import { Execution, ExecutionStatus, type TerminalStatus } from './execution.entity';
import { GroupCommit } from '../../common/group-commit';

/** What may still end (a cancel too): what runs, waits for a worker, or waits for its caller. */
const ACTIVE: ExecutionStatus[] = ['queued', 'running', 'input_required'];
/** What a process runs or will run: left so by a stopped embedded process, it is recovered. */
const IN_FLIGHT: ExecutionStatus[] = ['queued', 'running'];
/** The longest timeout a call may ask for: the deadline of rows written before timeouts were stored. */
const MAX_TIMEOUT_SECONDS = 300;

/** Rows per batched statement: bounds a statement's size and the wait of its last caller. */
const MAX_BATCH = 100;

export type TerminalFields = Pick<Execution, 'result' | 'error'> & { status: TerminalStatus; completed_at: Date };

/** The columns an execution ends with: its terminal fields, the duration, and progress 100 on success. */
type TerminalColumns = TerminalFields & Pick<Execution, 'duration_ms'> & Partial<Pick<Execution, 'progress'>>;

export function terminalColumns(fields: TerminalFields, startedAt: Date | null): TerminalColumns {
  return {
    ...fields,
    duration_ms: startedAt ? fields.completed_at.getTime() - startedAt.getTime() : null,
    ...(fields.status === 'success' && { progress: 100 }),
  };
}

/** Why the sweeper ends an execution: it ran past its deadline, or waited too long for a worker or for its caller. */
export type OverdueReason = 'running' | 'queued' | 'unanswered';

type Finish = TerminalColumns & Pick<Execution, 'id'>;
type Start = Pick<Execution, 'id' | 'started_at' | 'claimed_by'>;

export interface ListFilter {
  status?: ExecutionStatus;
  tool_id?: string;
  mode?: Execution['mode'];
}

/** Whose executions may be read: an account, and the tools its key is narrowed to (null = all). */
export interface ExecutionReader {
  accountId: string;
  toolIds: ReadonlySet<string> | null;
}

/**
 * `update` (an UPDATE … RETURNING of execution rows) with the webhook outbox rows and internal trigger events of the rows it
 * moved, in one statement (src/webhooks/webhook-outbox.ts); answers the rows as a SELECT does.
 */
function withOutbox(update: string): string {
  return `WITH ended AS (${update}), outbox AS (${outboxInsert('ended')}), trigger_outbox AS (${triggerEventsInsert('ended')}) SELECT * FROM ended`;
}

/**
 * Execution rows; every transition out of an active state is conditional, so the first terminal
 * state wins. Inserts, starts and terminal writes are group-committed: concurrent callers share
 * one statement (see GroupCommit).
 */
@Injectable()
export class ExecutionsStore {
  private readonly inserts = new GroupCommit((executions: Execution[]) => this.insertAll(executions), MAX_BATCH);
  private readonly finishes = new GroupCommit((finishes: Finish[]) => this.finishAll(finishes), MAX_BATCH);
  private readonly starts = new GroupCommit((starts: Start[]) => this.startAll(starts), MAX_BATCH);

  constructor(@InjectRepository(Execution) private readonly executions: Repository<Execution>) {}

  /** Inserts the row as it is, in any state (a fast sync execution is inserted already finished). */
  insert(execution: Execution): Promise<void> {
    return this.inserts.submit(execution);
  }

  /** Moves an active execution to its terminal state; answers the row as it ends up (a finished one as it is). */
  finish(id: string, fields: TerminalFields, startedAt: Date | null): Promise<Execution> {
    return this.finishes.submit({ id, ...terminalColumns(fields, startedAt) });
  }

  /**
   * queued → running, claimed by `claim` (the job's id); a row already running under the same
   * claim is taken again (that job's earlier try wrote it but never heard back). Null when the
   * execution is no longer queued (cancelled, taken by another job, or finished).
   */
  start(id: string, now: Date, claim: string): Promise<Execution | null> {
    return this.starts.submit({ id, started_at: now, claimed_by: claim });
  }

  /** running → input_required: an async run stopped at its caller's questions; null when it is no longer running (a cancel won). */
  async awaitInput(id: string, requests: Record<string, InputRequest>, now: Date): Promise<Execution | null> {
    const [row] = (await this.executions.query(
      withOutbox(`UPDATE executions SET status = 'input_required', input_requests = $2::jsonb, waiting_since = $3::timestamptz
        WHERE id = $1 AND status = 'running' RETURNING *`),
      [id, JSON.stringify(requests), now.toISOString()],
    )) as Execution[];
    return row ? this.executions.create(row) : null;
  }

  /** input_required → running: a workflow run whose step got its answers; null when it no longer waits. */
  async resumeWaiting(id: string): Promise<Execution | null> {
    const [row] = (await this.executions.query(
      `UPDATE executions SET status = 'running', input_requests = NULL, waiting_since = NULL WHERE id = $1 AND status = 'input_required' RETURNING *`,
      [id],
    )) as [Execution[], number];
    return row[0] ? this.executions.create(row[0]) : null;
  }

  /** A workflow run's steps: its child executions, oldest first. */
  children(parentId: string): Promise<Execution[]> {
    return this.executions.find({ where: { parent_execution_id: parentId }, order: { id: 'ASC' } });
  }

  /**
   * Adds answers to an execution waiting for its caller; once every question asked has one it is
   * `queued` again (to run from the start with them). Null when it no longer waits.
   */
  async answer(id: string, responses: Record<string, unknown>, now: Date): Promise<Execution | null> {
    const rows = (await this.executions.query(
      `UPDATE executions
          SET input_responses = COALESCE(input_responses, '{}'::jsonb) || $2::jsonb,
              status = CASE WHEN (COALESCE(input_responses, '{}'::jsonb) || $2::jsonb) ?& ARRAY(SELECT jsonb_object_keys(input_requests)) THEN 'queued' ELSE status END,
              waiting_since = $3::timestamptz
        WHERE id = $1 AND status = 'input_required' RETURNING *`,
      [id, JSON.stringify(responses), now.toISOString()],
    )) as [Execution[], number];
    return rows[0][0] ? this.executions.create(rows[0][0]) : null;
  }

  /**
   * Removes a sync run that stopped to ask its caller for input, or a queued call its queue refused:
   * neither is an outcome of the call (the caller calls again).
   */
  async discard(id: string, status: 'running' | 'queued' = 'running'): Promise<void> {
    await this.executions.delete({ id, status });
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
    return this.executions.find({ where: { status: In(IN_FLIGHT) }, order: { id: 'ASC' } });
  }

  /**
   * Queued executions waiting since before `before`, oldest first, at most `limit`: the ones
   * whose job the reconciler checks (younger ones may still be on their way to the queue).
   */
  queuedBefore(before: Date, limit: number): Promise<Execution[]> {
    return this.executions
      .createQueryBuilder('e')
      .where("e.status = 'queued' AND COALESCE(e.waiting_since, e.created_at) < :before", { before })
      .orderBy('COALESCE(e.waiting_since, e.created_at)', 'ASC')
      .limit(limit)
      .getMany();
  }

  /** Which of these executions are queued now. */
  async stillQueued(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.executions.find({ select: { id: true }, where: { id: In(ids), status: 'queued' } });
    return new Set(rows.map(({ id }) => id));
  }

  /** How long the oldest queued execution has waited, in seconds (0 when none waits). */
  async oldestQueuedAgeSeconds(now: Date): Promise<number> {
    const [row] = (await this.executions.query(
      `SELECT EXTRACT(EPOCH FROM ($1::timestamptz - MIN(COALESCE(waiting_since, created_at))))::float8 AS age FROM executions WHERE status = 'queued'`,
      [now.toISOString()],
    )) as Array<{ age: number | null }>;
    return Math.max(0, row?.age ?? 0);
  }

  /**
   * Deletes executions older than their account's retention (docs/API.md#execution-lifecycle): the account's own
   * number, else its tier's. Returns how many were deleted.
   */
  async purgeExpired(now: Date): Promise<number> {
    const result = await this.executions.query(
      `DELETE FROM executions e USING accounts a
        WHERE e.account_id = a.id
          AND e.created_at < $1::timestamptz - make_interval(days => ${retentionDaysSql('a')})`,
      [now.toISOString()],
    );
    return (result as [unknown, number])[1] ?? 0;
  }

  /** Ends, with `error`, every running execution claimed by `claim` (its process was lost); answers them. */
  async endClaimed(claim: string, error: ErrorBody, now: Date): Promise<Execution[]> {
    return this.endWhere("status = 'running' AND claimed_by = $3", now, error, claim);
  }

  /**
   * Ends, as `error` (retryable) with `error`, every running execution past its deadline (start +
   * its timeout + `graceSeconds`: its runner would have ended it by then, so its process stopped or
   * could not write), every queued one that waited longer than `maxQueueWaitSeconds` for a worker,
   * and every one that waited as long for its caller's answer. Answers the ended rows, by reason.
   */
  async endOverdue(now: Date, graceSeconds: number, maxQueueWaitSeconds: number, errors: Record<OverdueReason, ErrorBody>): Promise<Record<OverdueReason, Execution[]>> {
    const end = (condition: string, error: ErrorBody, limit: number) => this.endWhere(condition, now, error, limit);
    const running = await end(
      `status = 'running' AND started_at + make_interval(secs => COALESCE(timeout_seconds, ${MAX_TIMEOUT_SECONDS}) + $3) < $1::timestamptz`,
      errors.running,
      graceSeconds,
    );
    const waitedTooLong = `COALESCE(waiting_since, created_at) + make_interval(secs => $3) < $1::timestamptz`;
    const queued = await end(`status = 'queued' AND ${waitedTooLong}`, errors.queued, maxQueueWaitSeconds);
    const unanswered = await end(`status = 'input_required' AND ${waitedTooLong}`, errors.unanswered, maxQueueWaitSeconds);
    return { running, queued, unanswered };
  }

  /** Ends every execution matching `condition` (`$1` now, `$3` the caller's value) as `error`; answers the ended rows. */
  private async endWhere(condition: string, now: Date, error: ErrorBody, value: unknown): Promise<Execution[]> {
    const rows = (await this.executions.query(
      withOutbox(`UPDATE executions
          SET status = 'error', error = $2::jsonb, completed_at = $1::timestamptz, sealed_inputs = NULL,
              duration_ms = CASE WHEN started_at IS NULL THEN NULL ELSE (EXTRACT(EPOCH FROM ($1::timestamptz - started_at)) * 1000)::integer END
        WHERE ${condition}
        RETURNING *`),
      [now.toISOString(), JSON.stringify(error), value],
    )) as Execution[];
    return rows.map((row) => this.executions.create(row));
  }

  async recordProgress(id: string, progress: number, message: string | null): Promise<void> {
    await this.executions.update({ id, status: 'running' }, { progress, progress_message: message });
  }

  async get(reader: ExecutionReader, id: string): Promise<Execution> {
    const execution = await this.executions.findOneBy({ ...this.where(reader, {}), id });
    if (!execution) throw AppException.notFound('Execution', id);
    return execution;
  }

  async page(reader: ExecutionReader, filter: ListFilter, limit: number, offset: number): Promise<{ executions: Execution[]; total: number }> {
    const [executions, total] = await this.executions.findAndCount({
      where: this.where(reader, filter),
      order: { id: 'DESC' },
      take: limit,
      skip: offset,
    });
    return { executions, total };
  }

  /** How many executions the reader may see that match the filter. */
  count(reader: ExecutionReader, filter: ListFilter): Promise<number> {
    return this.executions.countBy(this.where(reader, filter));
  }

  /**
   * What a resumed live subscription replays (docs/executions.md#resuming): the reader's executions
   * still active, or ended since `since`; `toolId` narrows them. Newest first, at most `limit`.
   */
  changedSince(reader: ExecutionReader, toolId: string | undefined, since: Date, limit: number): Promise<Execution[]> {
    const where = this.where(reader, { tool_id: toolId });
    return this.executions.find({ where: [{ ...where, status: In(ACTIVE) }, { ...where, completed_at: MoreThanOrEqual(since) }], order: { id: 'DESC' }, take: limit });
  }

  /** Keyset page, newest first: ids are time-ordered, so new executions never shift the walk. */
  async pageAfter(reader: ExecutionReader, filter: ListFilter, afterId: string | null, limit: number): Promise<{ executions: Execution[]; hasMore: boolean }> {
    const rows = await this.executions.find({
      where: { ...this.where(reader, filter), ...(afterId && { id: LessThan(afterId) }) },
      order: { id: 'DESC' },
      take: limit + 1,
    });
    return { executions: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  // Batches travel as one jsonb parameter read back as the table's own row type: one bind
  // parameter whatever the batch size, and PostgreSQL casts every column (jsonb, timestamptz)
  // the same way on node-pg and on PGlite. A member left out of the JSON reads as NULL.

  private async insertAll(executions: Execution[]): Promise<void[]> {
    // A sync execution is inserted already finished: its deliveries go with it.
    await this.executions.query(
      `WITH ended AS (INSERT INTO executions SELECT * FROM jsonb_populate_recordset(NULL::executions, $1::jsonb) RETURNING *),
       outbox AS (${outboxInsert('ended')})
       ${triggerEventsInsert('ended')}`,
      [JSON.stringify(executions)],
    );
    return executions.map(() => undefined);
  }

  private async startAll(starts: Start[]): Promise<Array<Execution | null>> {
    const [updated] = (await this.executions.query(
      `UPDATE executions e SET status = 'running', started_at = s.started_at, claimed_by = s.claimed_by
         FROM jsonb_populate_recordset(NULL::executions, $1::jsonb) s
        WHERE e.id = s.id AND (e.status = 'queued' OR (e.status = 'running' AND e.claimed_by = s.claimed_by))
        RETURNING e.*`,
      [JSON.stringify(starts)],
    )) as [Execution[], number];
    const rows = new Map(updated.map((row) => [row.id, row]));
    // Two jobs of one row in a batch: the row is updated once, from either; the job whose claim it took started it.
    return starts.map(({ id, claimed_by }) => {
      const row = rows.get(id);
      return row?.claimed_by === claimed_by ? this.executions.create(row) : null;
    });
  }

  private async finishAll(finishes: Finish[]): Promise<Execution[]> {
    // Two finishes of one row in a batch: the first submitted is the one that may win (an UPDATE
    // joined to two source rows would pick either); the later one answers the row as it ends up.
    const firstOfEach = new Map<string, Finish>();
    for (const finish of finishes) if (!firstOfEach.has(finish.id)) firstOfEach.set(finish.id, finish);
    const updated = (await this.executions.query(
      withOutbox(`UPDATE executions e
          SET status = f.status, result = f.result, error = f.error, completed_at = f.completed_at,
              duration_ms = f.duration_ms, progress = COALESCE(f.progress, e.progress), sealed_inputs = NULL
         FROM jsonb_populate_recordset(NULL::executions, $1::jsonb) f
        WHERE e.id = f.id AND e.status = ANY($2::text[])
        RETURNING e.*`),
      [JSON.stringify([...firstOfEach.values()]), ACTIVE],
    )) as Execution[];
    const rows = new Map(updated.map((row) => [row.id, row]));
    const notActive = [...firstOfEach.keys()].filter((id) => !rows.has(id));
    if (notActive.length > 0) for (const row of await this.executions.findBy({ id: In(notActive) })) rows.set(row.id, row);
    return finishes.map(({ id }) => {
      const row = rows.get(id);
      // Fails the batch; GroupCommit retries each alone, and the updates that did commit are then
      // answered as rows no longer active: the same rows.
      if (!row) throw new EntityNotFoundError(Execution, { id });
      return this.executions.create(row);
    });
  }

  /** A key narrowed to some tools reads only their executions (least privilege). */
  private where({ accountId, toolIds }: ExecutionReader, filter: ListFilter): FindOptionsWhere<Execution> {
    const allowed = (toolId: string) => toolIds === null || toolIds.has(toolId);
    const toolId = filter.tool_id
      ? allowed(filter.tool_id) ? filter.tool_id : In([])
      : toolIds === null ? undefined : In([...toolIds]);
    return {
      account_id: accountId,
      ...(filter.status && { status: filter.status }),
      ...(filter.mode && { mode: filter.mode }),
      ...(toolId !== undefined && { tool_id: toolId }),
    };
  }
}
