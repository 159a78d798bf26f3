import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import { AppException } from '../common/errors';
import { newExecutionId } from '../common/ids';
import { triggerEvents } from '../common/probes';
import { BoundedJsonata, ToolError } from '../tools/sdk';
import { KeyPrincipals } from './key-principals';
import { RUN_LEASE_MS } from './schedule-ticker';
import { TargetLauncher } from './target-launcher';
import { Trigger, TriggerEvent, type EventStatus } from './trigger.entity';

/** Time one filter or mapping expression may run. */
const EXPRESSION_TIME_LIMIT_MS = 1_000;
const BATCH = 100;

/** What a trigger's expressions made of an event: the target's inputs, or why it starts nothing. */
export type Evaluation = { inputs: Record<string, unknown> } | { status: 'filtered' | 'failed'; reason: string };

/** How an event ended, as the log and the events endpoint's answer show it. */
export interface EventOutcome {
  status: EventStatus;
  reason: string | null;
  executionId: string | null;
}

/**
 * Starts the targets of trigger events (docs/orchestration.md#triggers): the filter and the input
 * mapping (JSONata under json-transform's bounds, the SDK's BoundedJsonata) over `{ payload,
 * headers }`, then the target as the trigger's key. An inbound event is started by the request
 * that brought it; internal events (written with the end of the execution they are about,
 * src/webhooks/webhook-outbox.ts), and inbound ones whose process died before their start, are
 * taken by the OrchestrationLoop, leased like schedule runs.
 */
@Injectable()
export class TriggerLaunches {
  private readonly logger = new Logger(TriggerLaunches.name);
  private readonly jsonata = new BoundedJsonata();

  constructor(
    @InjectRepository(Trigger) private readonly triggers: Repository<Trigger>,
    @InjectRepository(TriggerEvent) private readonly events: Repository<TriggerEvent>,
    private readonly keys: KeyPrincipals,
    private readonly launcher: TargetLauncher,
  ) {}

  /** Throws a 400 naming `parameter` when `expression` does not parse. */
  checkExpression(expression: string, parameter: string): void {
    try {
      this.jsonata.check(expression);
    } catch (err) {
      throw AppException.invalidRequest(`${parameter} is not a valid JSONata expression: ${(err as Error).message}`, { parameter });
    }
  }

  /** The filter, then the mapping over the literal inputs. */
  async evaluate(trigger: Trigger, payload: unknown, headers: Record<string, string>): Promise<Evaluation> {
    const data = { payload, headers };
    try {
      if (trigger.filter !== null) {
        const verdict = await this.run(trigger.filter, data);
        if (!verdict) return { status: 'filtered', reason: `The filter answered ${JSON.stringify(verdict)}` };
      }
      const inputs = { ...trigger.target_inputs };
      for (const [name, expression] of Object.entries(trigger.input_map ?? {})) {
        const value = await this.run(expression, data);
        if (value !== null) inputs[name] = value;
      }
      return { inputs };
    } catch (err) {
      if (!(err instanceof ToolError)) throw err;
      return { status: 'failed', reason: `An expression of the trigger failed: ${err.message}` };
    }
  }

  /** Starts the target of a pending event (its execution id chosen) unless it already was; records how it ended. */
  async start(trigger: Trigger, event: TriggerEvent, inputs: Record<string, unknown>, source: 'inbound' | 'internal'): Promise<EventOutcome> {
    const executionId = event.execution_id!;
    const existing = (await this.events.query(`SELECT 1 FROM executions WHERE id = $1`, [executionId])) as unknown[];
    if (existing.length > 0) return this.end(event, { status: 'started', reason: null, executionId }, source);
    const standing = await this.keys.standing(trigger.key_id);
    if ('refused' in standing) return this.end(event, { status: 'refused', reason: standing.refused, executionId: null }, source);
    try {
      await this.launcher.launch({
        principal: standing.principal,
        target: { kind: trigger.target_kind, id: trigger.target_id },
        inputs,
        origin: { executionId, triggerId: trigger.id },
      });
    } catch (err) {
      if (!(err instanceof AppException)) throw err;
      return this.end(event, { status: 'failed', reason: `${err.code}: ${err.message}`, executionId: null }, source);
    }
    return this.end(event, { status: 'started', reason: null, executionId }, source);
  }

  /** One take of pending events whose lease is free (internal ones, and inbound ones whose process died). */
  async startPending(now: Date): Promise<void> {
    const [leased] = (await this.events.query(
      `UPDATE trigger_events t SET locked_until = $2
         FROM (SELECT id FROM trigger_events WHERE status = 'pending' AND (locked_until IS NULL OR locked_until < $1) ORDER BY created_at LIMIT $3) picked
        WHERE t.id = picked.id AND t.status = 'pending' AND (t.locked_until IS NULL OR t.locked_until < $1)
        RETURNING t.*`,
      [now.toISOString(), new Date(now.getTime() + RUN_LEASE_MS).toISOString(), BATCH],
    )) as [TriggerEvent[], number];
    if (leased.length === 0) return;
    const triggers = new Map((await this.triggers.findBy({ id: In([...new Set(leased.map((e) => e.trigger_id))]) })).map((t) => [t.id, t]));
    for (const row of leased) {
      const event = this.events.create(row);
      const trigger = triggers.get(event.trigger_id);
      if (!trigger) continue;
      try {
        await this.take(trigger, event);
      } catch (err) {
        this.logger.error(`Trigger event ${event.id} could not be started: ${(err as Error).message}`);
      }
    }
  }

  private async take(trigger: Trigger, event: TriggerEvent): Promise<void> {
    const source = event.payload !== null ? 'internal' : 'inbound';
    let inputs = event.inputs;
    if (event.payload !== null) {
      const evaluation = await this.evaluate(trigger, event.payload, {});
      if ('status' in evaluation) {
        await this.end(event, { status: evaluation.status, reason: evaluation.reason, executionId: null }, source);
        return;
      }
      inputs = evaluation.inputs;
    }
    if (!event.execution_id) {
      event.execution_id = newExecutionId();
      await this.events.update({ id: event.id, status: 'pending' }, { execution_id: event.execution_id });
    }
    await this.start(trigger, event, inputs ?? {}, source);
  }

  private async run(expression: string, data: unknown): Promise<unknown> {
    return this.jsonata.evaluate(expression, data, undefined, { signal: AbortSignal.timeout(EXPRESSION_TIME_LIMIT_MS * 2), timeLimitMs: EXPRESSION_TIME_LIMIT_MS });
  }

  /** Ends a pending event; the payload and inputs it kept for its start are dropped. */
  async end(event: TriggerEvent, outcome: EventOutcome, source: 'inbound' | 'internal'): Promise<EventOutcome> {
    await this.events.update(
      { id: event.id, status: 'pending' },
      { status: outcome.status, reason: outcome.reason, execution_id: outcome.executionId, payload: null, inputs: null, locked_until: null },
    );
    if (triggerEvents.hasSubscribers) triggerEvents.publish({ source, status: outcome.status });
    return outcome;
  }
}
