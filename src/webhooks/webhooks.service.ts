import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppException } from '../common/errors';
import { randomBase62 } from '../common/ids';
import { underAccountCap } from '../database/account-cap';
import { AppConfig } from '../config/app-config';
import type { Principal } from '../identity/principal';
import { retentionDaysSql } from '../identity/tiers';
import { SecretsService } from '../secrets/secrets.service';
import { EgressPool, egressSettingsOf } from '../tools/egress/egress';
import { KnownTools } from '../tools/known-tools';
import { WebhookDelivery, type DeliveryStatus } from './webhook-delivery.entity';
import { DELIVERY_INSERT, newDeliveryId } from './webhook-outbox';
import { newWebhookSecret } from './webhook-signing';
import { WebhookSubscription } from './webhook-subscription.entity';
import { checkedWebhookUrl } from './webhook-url';
import { deliveryView, subscriptionView, type DeliveryView, type SubscriptionView } from './webhook-views';

/** Subscriptions one account may hold. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 20;

export interface SubscriptionFields {
  url: string;
  events: string[];
  tool_ids?: string[] | null;
  description?: string | null;
}

export interface DeliveryFilter {
  status?: DeliveryStatus;
  event?: string;
}

/** The secret's name under SecretsService's sealing: binds the sealed value to its subscription (and which of its secrets). */
const sealedName = (id: string, which: 'current' | 'previous') => `webhook:${id}:${which}`;

/** Webhook subscriptions of an account, their delivery log and redelivery (docs/API.md#webhooks). */
@Injectable()
export class WebhooksService {
  constructor(
    @InjectRepository(WebhookSubscription) private readonly subscriptions: Repository<WebhookSubscription>,
    @InjectRepository(WebhookDelivery) private readonly deliveries: Repository<WebhookDelivery>,
    private readonly secrets: SecretsService,
    private readonly knownTools: KnownTools,
    private readonly config: AppConfig,
    private readonly egresses: EgressPool,
  ) {}

  /** The subscription and its secret, which no later answer shows again. */
  async create(principal: Principal, fields: SubscriptionFields, now = new Date()): Promise<SubscriptionView & { secret: string }> {
    const id = `wh_${randomBase62(20)}`;
    const secret = newWebhookSecret();
    const sealed = this.secrets.sealCredential(principal.accountId, sealedName(id, 'current'), secret);
    await this.known(principal, fields.tool_ids);
    const row = this.subscriptions.create({
      id,
      account_id: principal.accountId,
      ...this.checked(principal, fields),
      enabled: true,
      disabled_reason: null,
      secret_key_id: sealed.key_id,
      secret_sealed: sealed.sealed,
      previous_secret_key_id: null,
      previous_secret_sealed: null,
      previous_secret_expires_at: null,
      created_at: now,
      updated_at: now,
    });
    await underAccountCap(this.subscriptions.manager, principal.accountId, WebhookSubscription, MAX_WEBHOOKS_PER_ACCOUNT, 'webhook subscriptions', (manager) => manager.insert(WebhookSubscription, row));
    return { ...subscriptionView(row), secret };
  }

  /** The account's subscriptions the caller may see (a key narrowed to some tools: those narrowed within them). */
  async list(principal: Principal, limit: number, offset: number): Promise<{ webhooks: SubscriptionView[]; total: number }> {
    const rows = (await this.subscriptions.find({ where: { account_id: principal.accountId }, order: { id: 'ASC' } })).filter((row) => visibleTo(principal, row));
    return { webhooks: rows.slice(offset, offset + limit).map(subscriptionView), total: rows.length };
  }

  async get(principal: Principal, id: string): Promise<SubscriptionView> {
    return subscriptionView(await this.find(principal, id));
  }

  /** Changes what is given; `enabled: true` re-enables one the service disabled (and clears why). */
  async update(principal: Principal, id: string, fields: Partial<SubscriptionFields> & { enabled?: boolean }, now = new Date()): Promise<SubscriptionView> {
    const row = await this.find(principal, id);
    // Only ids given now: a stored one whose upstream has gone does not block changing the URL.
    await this.known(principal, fields.tool_ids);
    const merged = this.checked(principal, {
      url: fields.url ?? row.url,
      events: fields.events ?? row.events,
      tool_ids: fields.tool_ids === undefined ? row.tool_ids : fields.tool_ids,
      description: fields.description === undefined ? row.description : fields.description,
    });
    const enabled = fields.enabled ?? row.enabled;
    // The service's reason for disabling goes with any change of `enabled` by the owner.
    const disabledReason = fields.enabled === undefined ? row.disabled_reason : null;
    Object.assign(row, merged, { enabled, disabled_reason: disabledReason, updated_at: now });
    await this.subscriptions.save(row);
    return subscriptionView(row);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    await this.subscriptions.delete({ id: (await this.find(principal, id)).id });
  }

  /** A new secret; the old one keeps signing beside it for WEBHOOK_SECRET_OVERLAP_HOURS. */
  async rotateSecret(principal: Principal, id: string, now = new Date()): Promise<SubscriptionView & { secret: string }> {
    const row = await this.find(principal, id);
    const old = this.secrets.openCredential(row.account_id, sealedName(id, 'current'), { key_id: row.secret_key_id, sealed: row.secret_sealed });
    const secret = newWebhookSecret();
    const sealed = this.secrets.sealCredential(row.account_id, sealedName(id, 'current'), secret);
    const previous = this.secrets.sealCredential(row.account_id, sealedName(id, 'previous'), old);
    Object.assign(row, {
      secret_key_id: sealed.key_id,
      secret_sealed: sealed.sealed,
      previous_secret_key_id: previous.key_id,
      previous_secret_sealed: previous.sealed,
      previous_secret_expires_at: new Date(now.getTime() + this.config.WEBHOOK_SECRET_OVERLAP_HOURS * 3_600_000),
      updated_at: now,
    });
    await this.subscriptions.save(row);
    return { ...subscriptionView(row), secret };
  }

  /** The secrets that sign a delivery now, newest first (two during a rotation's overlap). */
  signingSecrets(row: WebhookSubscription, now: Date): string[] {
    const current = this.secrets.openCredential(row.account_id, sealedName(row.id, 'current'), { key_id: row.secret_key_id, sealed: row.secret_sealed });
    const overlapping = row.previous_secret_sealed && row.previous_secret_key_id && row.previous_secret_expires_at && row.previous_secret_expires_at > now;
    if (!overlapping) return [current];
    return [current, this.secrets.openCredential(row.account_id, sealedName(row.id, 'previous'), { key_id: row.previous_secret_key_id!, sealed: row.previous_secret_sealed! })];
  }

  /**
   * The service turns a subscription off (410 Gone, or its retry schedule exhausted): with its
   * reason, its pending deliveries ended, and a `webhook.disabled` event queued to the account's
   * other subscriptions that take it — in one statement, so none of it happens without the rest.
   * False when it was already off.
   */
  async disable(subscription: Pick<WebhookSubscription, 'id'>, reason: string, now = new Date()): Promise<boolean> {
    const off = (await this.subscriptions.query(
      `WITH off AS (
         UPDATE webhook_subscriptions SET enabled = false, disabled_reason = $2, updated_at = $3::timestamptz
          WHERE id = $1 AND enabled RETURNING id, account_id, url),
       dropped AS (
         UPDATE webhook_deliveries SET status = 'failed', last_error = 'Not sent: ' || $2, locked_until = NULL
          WHERE subscription_id IN (SELECT id FROM off) AND status = 'pending'),
       notices AS (
         ${DELIVERY_INSERT}
         SELECT ${newDeliveryId}, s.id, s.account_id, 'webhook.disabled', NULL,
                jsonb_build_object('webhook_id', off.id, 'url', off.url, 'reason', $2::text),
                $3::timestamptz, 'pending', 0, $3::timestamptz, '[]'::jsonb, $3::timestamptz
           FROM off JOIN webhook_subscriptions s ON s.account_id = off.account_id AND s.enabled AND s.id <> off.id AND 'webhook.disabled' = ANY(s.events))
       SELECT id FROM off`,
      [subscription.id, reason, now.toISOString()],
    )) as Array<{ id: string }>;
    return off.length > 0;
  }

  /** Queues a `ping` to the subscription, delivered (and logged) like any event. */
  async ping(principal: Principal, id: string, now = new Date()): Promise<DeliveryView> {
    const row = await this.find(principal, id);
    if (!row.enabled) throw disabled(row);
    const delivery = this.deliveries.create({
      id: `msg_${randomBase62(24)}`,
      subscription_id: row.id,
      account_id: row.account_id,
      event: 'ping',
      execution_id: null,
      data: { webhook_id: row.id, message: 'A test event sent through POST /v1/webhooks/{id}/test' },
      event_at: now,
      status: 'pending',
      attempt_count: 0,
      next_attempt_at: now,
      locked_until: null,
      attempts: [],
      last_error: null,
      created_at: now,
      delivered_at: null,
    });
    await this.deliveries.save(delivery);
    return deliveryView(delivery);
  }

  /** The subscription's deliveries, newest first, with every attempt. */
  async deliveryLog(principal: Principal, id: string, filter: DeliveryFilter, limit: number, offset: number): Promise<{ deliveries: DeliveryView[]; total: number }> {
    const row = await this.find(principal, id);
    const [rows, total] = await this.deliveries.findAndCount({
      where: { subscription_id: row.id, ...(filter.status && { status: filter.status }), ...(filter.event && { event: filter.event }) },
      order: { created_at: 'DESC', id: 'DESC' },
      take: limit,
      skip: offset,
    });
    return { deliveries: rows.map(deliveryView), total };
  }

  /** Sends a delivery again from the start of the schedule, under the same `webhook-id`. */
  async redeliver(principal: Principal, id: string, deliveryId: string, now = new Date()): Promise<DeliveryView> {
    const row = await this.find(principal, id);
    if (!row.enabled) throw disabled(row);
    const [updated] = (await this.deliveries.query(
      `UPDATE webhook_deliveries SET status = 'pending', attempt_count = 0, next_attempt_at = $3::timestamptz, locked_until = NULL, last_error = NULL
        WHERE id = $1 AND subscription_id = $2 AND status <> 'pending' RETURNING *`,
      [deliveryId, row.id, now.toISOString()],
    )) as [WebhookDelivery[], number];
    if (updated[0]) return deliveryView(this.deliveries.create(updated[0]));
    const existing = await this.deliveries.findOneBy({ id: deliveryId, subscription_id: row.id });
    if (!existing) throw AppException.notFound('Delivery', deliveryId);
    throw new AppException('CONFLICT', `Delivery ${deliveryId} is still pending: it is sent at ${existing.next_attempt_at.toISOString()}`);
  }

  /** Deletes ended deliveries older than their account's retention (as executions); answers how many. */
  async purgeExpired(now: Date): Promise<number> {
    const result = await this.deliveries.query(
      `DELETE FROM webhook_deliveries d USING accounts a
        WHERE d.account_id = a.id AND d.status <> 'pending'
          AND d.created_at < $1::timestamptz - make_interval(days => ${retentionDaysSql('a')})`,
      [now.toISOString()],
    );
    return (result as [unknown, number])[1] ?? 0;
  }

  private async find(principal: Principal, id: string): Promise<WebhookSubscription> {
    const row = await this.subscriptions.findOneBy({ id, account_id: principal.accountId });
    if (!row || !visibleTo(principal, row)) throw AppException.notFound('Webhook', id);
    return row;
  }

  /** Each id names a built-in tool or one of the account's upstream tools (docs/upstreams.md). */
  private async known(principal: Principal, toolIds: readonly string[] | null | undefined): Promise<void> {
    const unknown = await this.knownTools.firstUnknown(principal.accountId, toolIds ?? []);
    if (unknown) throw AppException.invalidRequest(`Unknown tool in tool_ids: ${unknown}`, { parameter: 'tool_ids' });
  }

  /** The fields as stored: URL checked, tools within the key's. */
  private checked(principal: Principal, fields: SubscriptionFields): Pick<WebhookSubscription, 'url' | 'events' | 'tool_ids' | 'description'> {
    const toolIds = fields.tool_ids && fields.tool_ids.length > 0 ? [...new Set(fields.tool_ids)].sort() : null;
    if (principal.toolIds) {
      const outside = toolIds === null ? 'every tool' : toolIds.find((toolId) => !principal.toolIds!.has(toolId));
      if (outside) {
        throw new AppException('FORBIDDEN', `This key is narrowed to some tools: a webhook it creates must list tool_ids within them (${outside} is not)`, {
          details: { allowed_tool_ids: [...principal.toolIds].sort() },
        });
      }
    }
    return {
      url: checkedWebhookUrl(fields.url, this.egresses.for(egressSettingsOf(this.config)).policy),
      events: [...new Set(fields.events)].sort(),
      tool_ids: toolIds,
      description: fields.description ?? null,
    };
  }
}

/** A key narrowed to some tools sees only subscriptions narrowed within them. */
function visibleTo(principal: Principal, row: WebhookSubscription): boolean {
  return principal.toolIds === null || (row.tool_ids !== null && row.tool_ids.every((toolId) => principal.toolIds!.has(toolId)));
}

function disabled(row: WebhookSubscription): AppException {
  return new AppException('CONFLICT', `Webhook ${row.id} is disabled${row.disabled_reason ? ` (${row.disabled_reason})` : ''}: enable it first (PATCH {"enabled": true})`);
}
