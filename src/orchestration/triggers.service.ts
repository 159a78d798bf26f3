import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { FastifyRequest } from 'fastify';
import { Repository } from 'typeorm';
import { AppException } from '../common/errors';
import { underAccountCap } from '../database/account-cap';
import { newExecutionId, randomBase62 } from '../common/ids';
import { triggerEvents } from '../common/probes';
import type { Principal } from '../identity/principal';
import { ORCHESTRATION_LIMITS } from '../identity/tiers';
import { AppConfig } from '../config/app-config';
import { countIpFailure } from '../limits/rate-limit-headers';
import { WindowStore } from '../limits/window-store';
import { SecretsService } from '../secrets/secrets.service';
import { TRIGGER_SOURCE_EVENTS } from '../webhooks/webhook-outbox';
import { RunningKeys } from './key-principals';
import { ownedBy, visibleTo } from './ownership';
import { RUN_LEASE_MS } from './schedule-ticker';
import { TargetLauncher } from './target-launcher';
import { parseTarget } from './target-view';
import { TriggerLaunches, type EventOutcome } from './trigger-launches';
import { Trigger, TriggerEvent, VERIFICATION_TYPES, type EventStatus, type VerificationType } from './trigger.entity';
import { deliveryIdOf, MAX_DELIVERY_ID_LENGTH, newTriggerSecret, verificationFailure, type Headers } from './trigger-verification';
import { eventView, triggerView, type EventView, type TriggerView } from './trigger-views';

export interface TriggerFields {
  target: Record<string, unknown>;
  verification?: { type: VerificationType; secret?: string };
  source?: { event: string; tool_ids?: string[] };
  filter?: string;
  inputs?: Record<string, string>;
  description?: string;
  /** The key it runs as, when not the caller's own (docs/orchestration.md#the-key-it-runs-as). */
  key_id?: string;
}

/** What the events endpoint answers: 202 accepted (or not, and why), 200 for a delivery already received. */
export interface EventAnswer {
  httpStatus: 200 | 202;
  body: { accepted: boolean; event_id: string; execution_id: string | null; reason?: string; duplicate?: true };
}

const MAX_EXPRESSION_LENGTH = 10_000;
const TOOL_ID = /^[A-Za-z0-9._-]{1,128}$/;
/** A secret given by the owner must be at least this long: it is all that stands between the URL and the target. */
const MIN_SECRET_LENGTH = 16;
/** Request headers the filter and mapping never see: the credentials that verified the event. */
const HIDDEN_HEADERS = new Set(['authorization', 'cookie', 'x-gitlab-token', 'x-hub-signature', 'x-hub-signature-256', 'webhook-signature']);

/** The secret's name under SecretsService's sealing: binds the sealed value to its trigger. */
const sealedName = (id: string) => `trigger:${id}`;

/** Triggers of an account, their events endpoint and log (docs/orchestration.md#triggers). */
@Injectable()
export class TriggersService {
  constructor(
    @InjectRepository(Trigger) private readonly triggers: Repository<Trigger>,
    @InjectRepository(TriggerEvent) private readonly events: Repository<TriggerEvent>,
    private readonly secrets: SecretsService,
    private readonly launcher: TargetLauncher,
    private readonly launches: TriggerLaunches,
    private readonly windows: WindowStore,
    private readonly config: AppConfig,
    private readonly runningKeys: RunningKeys,
  ) {}

  /** The trigger and, for an inbound one, its secret, which no later answer shows again. */
  async create(principal: Principal, fields: TriggerFields, now = new Date()): Promise<TriggerView & { secret?: string }> {
    const { target: named, inputs } = parseTarget(fields.target);
    if ((fields.verification === undefined) === (fields.source === undefined)) {
      throw AppException.invalidRequest('A trigger has exactly one of verification (an inbound URL) and source (this service’s own events)', { parameter: 'verification' });
    }
    if (fields.filter !== undefined) this.launches.checkExpression(fields.filter, 'filter');
    for (const [name, expression] of Object.entries(fields.inputs ?? {})) {
      if (typeof expression !== 'string' || expression.length > MAX_EXPRESSION_LENGTH) {
        throw AppException.invalidRequest(`inputs.${name} must be a JSONata expression of at most ${MAX_EXPRESSION_LENGTH} characters`, { parameter: `inputs.${name}` });
      }
      this.launches.checkExpression(expression, `inputs.${name}`);
    }
    if (fields.source) checkSource(fields.source);
    // With a mapping the whole input is known only per event: its literal part is checked then.
    const id = `trg_${randomBase62(20)}`;
    const secret = fields.verification && this.checkedSecret(fields.verification);
    const { principal: runAs, ...runningKey } = await this.runningKeys.for(principal, fields.key_id, `trigger ${id}`, now);
    const target = await this.runningKeys.orRelease(principal.accountId, runningKey, () => this.launcher.check(runAs, named, fields.inputs ? null : inputs, 'target'));
    const sealed = secret === undefined ? null : this.secrets.sealCredential(principal.accountId, sealedName(id), secret);
    const row = this.triggers.create({
      id,
      account_id: principal.accountId,
      ...runningKey,
      target_kind: target.kind,
      target_id: target.id,
      target_inputs: inputs,
      input_map: fields.inputs ?? null,
      filter: fields.filter ?? null,
      verification: fields.verification?.type ?? null,
      secret_key_id: sealed?.key_id ?? null,
      secret_sealed: sealed?.sealed ?? null,
      source_event: fields.source?.event ?? null,
      source_tool_ids: fields.source?.tool_ids?.length ? fields.source.tool_ids : null,
      description: fields.description ?? null,
      created_at: now,
      updated_at: now,
    });
    const limit = ORCHESTRATION_LIMITS[principal.tier].triggers;
    await this.runningKeys.orRelease(principal.accountId, runningKey, () => underAccountCap(this.triggers.manager, principal.accountId, Trigger, limit, 'triggers', (manager) => manager.save(Trigger, row)));
    return { ...triggerView(row), ...(secret !== undefined && { secret }) };
  }

  async list(principal: Principal, limit: number, offset: number): Promise<{ triggers: TriggerView[]; total: number }> {
    const [rows, total] = await this.triggers.findAndCount({ where: visibleTo(principal), order: { id: 'ASC' }, take: limit, skip: offset });
    return { triggers: rows.map(triggerView), total };
  }

  async get(principal: Principal, id: string): Promise<TriggerView> {
    return triggerView(await this.find(principal, id));
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const row = await this.find(principal, id);
    await this.triggers.delete({ id: row.id });
    await this.runningKeys.release(row.account_id, row);
  }

  /** Its recent events, newest first. */
  async eventLog(principal: Principal, id: string, limit: number, offset: number): Promise<{ events: EventView[]; total: number }> {
    const trigger = await this.find(principal, id);
    const [rows, total] = await this.events.findAndCount({ where: { trigger_id: trigger.id }, order: { created_at: 'DESC', id: 'DESC' }, take: limit, skip: offset });
    return { events: rows.map(eventView), total };
  }

  /**
   * `POST /v1/triggers/{id}/events`: verified (401 and nothing started when not), deduplicated by
   * the sender's delivery id, filtered, mapped, then started as the trigger's key. Every event
   * that reaches the trigger is logged, refused ones included; those count against the client
   * IP's window as a request without a valid key does (past it 429, and nothing logged).
   */
  async receive(id: string, request: FastifyRequest, rawBody: Buffer, payload: unknown, now = new Date()): Promise<EventAnswer> {
    const { headers } = request;
    const trigger = await this.triggers.findOneBy({ id });
    if (!trigger?.verification) throw AppException.notFound('Trigger', id);
    const secret = this.secrets.openCredential(trigger.account_id, sealedName(trigger.id), { key_id: trigger.secret_key_id!, sealed: trigger.secret_sealed! });
    const failure = verificationFailure(trigger.verification, secret, headers, rawBody);
    if (failure) {
      await countIpFailure(this.windows, this.config.IP_RATE_LIMIT, request);
      // Logged without the unverified delivery id: a forger cannot use up a real delivery's id.
      await this.record(trigger, null, 'refused', failure, now);
      throw new AppException('UNAUTHORIZED', `The event is not verified: ${failure}`);
    }
    const deliveryId = deliveryIdOf(headers);
    if (deliveryId !== null && deliveryId.length > MAX_DELIVERY_ID_LENGTH) {
      throw AppException.invalidRequest(`The delivery id is longer than ${MAX_DELIVERY_ID_LENGTH} characters`, { parameter: 'delivery id header' });
    }
    const evaluation = await this.launches.evaluate(trigger, payload, visibleHeaders(headers));
    const accepted = !('status' in evaluation);
    const event = this.events.create({
      id: `tev_${randomBase62(24)}`,
      trigger_id: trigger.id,
      account_id: trigger.account_id,
      delivery_id: deliveryId,
      status: accepted ? 'pending' : evaluation.status,
      reason: accepted ? null : evaluation.reason,
      payload: null,
      inputs: accepted ? evaluation.inputs : null,
      execution_id: accepted ? newExecutionId(now.getTime()) : null,
      // This request starts it; should its process die first, a worker takes it when this lapses.
      locked_until: accepted ? new Date(now.getTime() + RUN_LEASE_MS) : null,
      created_at: now,
    });
    const inserted = (await this.events.query(
      `INSERT INTO trigger_events SELECT * FROM jsonb_populate_record(NULL::trigger_events, $1::jsonb) ON CONFLICT (trigger_id, delivery_id) DO NOTHING RETURNING id`,
      [JSON.stringify(event)],
    )) as unknown[];
    if (inserted.length === 0) return this.duplicate(trigger, deliveryId!);
    if (!accepted) {
      publish(event.status);
      return answer(event.id, { status: event.status, reason: event.reason, executionId: null });
    }
    return answer(event.id, await this.launches.start(trigger, event, evaluation.inputs, 'inbound'));
  }

  private async duplicate(trigger: Trigger, deliveryId: string): Promise<EventAnswer> {
    const first = await this.events.findOneByOrFail({ trigger_id: trigger.id, delivery_id: deliveryId });
    publish('duplicate');
    return {
      httpStatus: 200,
      body: { accepted: false, duplicate: true, event_id: first.id, execution_id: first.status === 'started' ? first.execution_id : null, reason: `Delivery ${deliveryId} was received before (event ${first.id}, ${first.status}): nothing is started again` },
    };
  }

  private async record(trigger: Trigger, deliveryId: string | null, status: EventStatus, reason: string, now: Date): Promise<void> {
    await this.events.insert({ id: `tev_${randomBase62(24)}`, trigger_id: trigger.id, account_id: trigger.account_id, delivery_id: deliveryId, status, reason, payload: null, inputs: null, execution_id: null, locked_until: null, created_at: now });
    publish(status);
  }

  private checkedSecret({ type, secret }: { type: VerificationType; secret?: unknown }): string {
    if (!VERIFICATION_TYPES.includes(type)) throw AppException.invalidRequest(`verification.type must be one of ${VERIFICATION_TYPES.join(', ')}`, { parameter: 'verification.type' });
    if (secret === undefined) return newTriggerSecret(type);
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH || secret.length > 1024) throw AppException.invalidRequest(`verification.secret must be a string of ${MIN_SECRET_LENGTH} to 1024 characters`, { parameter: 'verification.secret' });
    if (type === 'standard_webhooks' && !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret)) {
      throw AppException.invalidRequest('A Standard Webhooks secret is whsec_ followed by base64', { parameter: 'verification.secret' });
    }
    return secret;
  }

  private async find(principal: Principal, id: string): Promise<Trigger> {
    return ownedBy(await this.triggers.findOneBy({ id, ...visibleTo(principal) }), 'Trigger', id);
  }
}

function checkSource({ event, tool_ids }: { event: unknown; tool_ids?: unknown }): void {
  if (!TRIGGER_SOURCE_EVENTS.includes(event as never)) throw AppException.invalidRequest(`source.event must be one of ${TRIGGER_SOURCE_EVENTS.join(', ')}`, { parameter: 'source.event' });
  const valid = tool_ids === undefined || (Array.isArray(tool_ids) && tool_ids.length <= 200 && tool_ids.every((id) => typeof id === 'string' && TOOL_ID.test(id)));
  if (!valid) throw AppException.invalidRequest('source.tool_ids must be at most 200 tool ids', { parameter: 'source.tool_ids' });
}

function answer(eventId: string, outcome: EventOutcome): EventAnswer {
  const accepted = outcome.status === 'started';
  return { httpStatus: 202, body: { accepted, event_id: eventId, execution_id: outcome.executionId, ...(!accepted && { reason: outcome.reason ?? outcome.status }) } };
}

function publish(status: string): void {
  if (triggerEvents.hasSubscribers) triggerEvents.publish({ source: 'inbound', status });
}

/** The request's headers as the filter and mapping see them: lower-case names, one value each, credentials left out. */
function visibleHeaders(headers: Headers): Record<string, string> {
  const visible: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HIDDEN_HEADERS.has(name.toLowerCase())) continue;
    visible[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return visible;
}
