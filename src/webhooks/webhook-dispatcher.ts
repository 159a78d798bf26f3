import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import { webhookAttempts, webhookAudits, webhooksDisabled } from '../common/probes';
import { AppConfig } from '../config/app-config';
import { EgressPool, egressSettingsOf } from '../tools/egress/egress';
import { WebhookDelivery, type DeliveryAttempt } from './webhook-delivery.entity';
import { sendDelivery, type SendOutcome } from './webhook-sender';
import { signDelivery } from './webhook-signing';
import { WebhookSubscription } from './webhook-subscription.entity';
import { WebhooksService } from './webhooks.service';

/** How long a claimed delivery stays this process's beyond its attempt's timeout: past it (the process died) another process takes it. */
const LEASE_MARGIN_MS = 60_000;
/** How often a dispatcher counts the outbox for metrics (only while metrics listen). */
const AUDIT_EVERY_MS = 15_000;
/** The jitter of a retry: ± this share of its delay. */
const JITTER = 0.1;
/** The longest `Retry-After` obeyed: an endpoint cannot park a delivery for longer. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** What one attempt's answer means for the delivery and its subscription. */
type Verdict = { kind: 'delivered' } | { kind: 'gone' } | { kind: 'retry'; delayMs: number } | { kind: 'exhausted' };

/**
 * Sends the outbox (src/webhooks/webhook-outbox.ts): every WEBHOOK_POLL_MS it claims due
 * deliveries with a lease (a conditional UPDATE, so two processes never hold one row; a row whose
 * holder died is due again when its lease lapses: at least once), and sends each on its own.
 * At most WEBHOOK_CONCURRENCY at once, and a subscription with deliveries in flight in this
 * process is not claimed for again until they end, at most WEBHOOK_ENDPOINT_CONCURRENCY at a
 * time: a slow or dead endpoint holds only its own slots, never the others'.
 * Runs in processes of the worker role (the embedded process holds both roles, so it delivers too).
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WebhookDispatcher.name);
  private readonly schedule: number[];
  private readonly inFlight = new Map<string, number>();
  private readonly sending = new Set<Promise<void>>();
  private timer?: NodeJS.Timeout;
  /** The claim under way, if any: one at a time, and shutdown waits for it. */
  private claiming: Promise<void> | null = null;
  /** The last claim filled every free slot: more may be due, so each freed slot claims again without waiting for the poll. */
  private backlogged = false;
  /** Epoch ms of the last audit of the outbox's depth. */
  private lastAudit = 0;
  private stopped = false;

  constructor(
    @InjectRepository(WebhookDelivery) private readonly deliveries: Repository<WebhookDelivery>,
    @InjectRepository(WebhookSubscription) private readonly subscriptions: Repository<WebhookSubscription>,
    private readonly webhooks: WebhooksService,
    private readonly config: AppConfig,
    private readonly egresses: EgressPool,
  ) {
    this.schedule = config.WEBHOOK_RETRY_SCHEDULE.split(',').map((seconds) => Number(seconds.trim()) * 1000);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.runsWorker || this.config.WEBHOOK_POLL_MS === 0) return;
    // Without Redis this is the only process (as QueueConsumer's recovery assumes): a lease still
    // held was this process's before it was killed, so its deliveries are due now, not when it lapses.
    if (!this.config.REDIS_URL) {
      await this.deliveries.query(`UPDATE webhook_deliveries SET locked_until = NULL WHERE status = 'pending' AND locked_until IS NOT NULL`);
    }
    this.timer = setInterval(() => void this.pass(), this.config.WEBHOOK_POLL_MS).unref();
  }

  /** Stops claiming and lets the attempts under way end (their rows stay leased, then due again). */
  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.claiming;
    await Promise.allSettled([...this.sending]);
  }

  /** One claim of due deliveries, each then sent without waiting for the others. */
  async pass(now = new Date()): Promise<void> {
    if (this.claiming || this.stopped) return;
    const room = this.config.WEBHOOK_CONCURRENCY - this.sending.size;
    if (room <= 0) return;
    this.claiming = this.claimAndSend(now, room).finally(() => {
      this.claiming = null;
    });
    await this.claiming;
  }

  private async claimAndSend(now: Date, room: number): Promise<void> {
    try {
      if (webhookAudits.hasSubscribers && now.getTime() - this.lastAudit >= AUDIT_EVERY_MS) {
        await this.audit(now).catch((err: Error) => this.logger.warn(`Counting the webhook outbox failed: ${err.message}`));
      }
      const claimed = await this.claim(now, room);
      this.backlogged = claimed.length === room;
      if (claimed.length === 0) return;
      const subscriptions = new Map((await this.subscriptions.findBy({ id: In([...new Set(claimed.map((d) => d.subscription_id))]) })).map((s) => [s.id, s]));
      for (const delivery of claimed) {
        this.inFlight.set(delivery.subscription_id, (this.inFlight.get(delivery.subscription_id) ?? 0) + 1);
        const sending: Promise<void> = this.deliver(delivery, subscriptions.get(delivery.subscription_id))
          .catch((err: Error) => this.logger.error(`Webhook delivery ${delivery.id} failed to record its attempt: ${err.message}`))
          .finally(() => {
            this.sending.delete(sending);
            const left = (this.inFlight.get(delivery.subscription_id) ?? 1) - 1;
            if (left > 0) this.inFlight.set(delivery.subscription_id, left);
            else this.inFlight.delete(delivery.subscription_id);
            if (this.backlogged) void this.pass();
          });
        this.sending.add(sending);
      }
    } catch (err) {
      this.logger.error(`Claiming webhook deliveries failed: ${(err as Error).message}`);
    }
  }

  /**
   * Due pending deliveries not leased (or whose lease lapsed), at most WEBHOOK_ENDPOINT_CONCURRENCY
   * per subscription and none of a subscription this process is sending to; accounts take turns
   * (each account's oldest first, then each one's second…), so one account's backlog never makes
   * another's deliveries wait behind it. The UPDATE re-checks the lease of each row it takes, so of two processes picking
   * the same row only the first takes it.
   */
  private async claim(now: Date, limit: number): Promise<WebhookDelivery[]> {
    const [rows] = (await this.deliveries.query(
      `UPDATE webhook_deliveries d SET locked_until = $1::timestamptz + make_interval(secs => $5)
         FROM (SELECT id FROM (
                 SELECT id, next_attempt_at, row_number() OVER (PARTITION BY account_id ORDER BY next_attempt_at, id) AS turn FROM (
                   SELECT w.id, w.account_id, w.next_attempt_at, row_number() OVER (PARTITION BY w.subscription_id ORDER BY w.next_attempt_at, w.id) AS nth
                     FROM webhook_deliveries w
                    WHERE w.status = 'pending' AND w.next_attempt_at <= $1::timestamptz
                      AND (w.locked_until IS NULL OR w.locked_until < $1::timestamptz)
                      AND NOT (w.subscription_id = ANY($4::text[]))) due
                  WHERE nth <= $3) fair
                ORDER BY turn, next_attempt_at LIMIT $2) picked
        WHERE d.id = picked.id AND d.status = 'pending' AND (d.locked_until IS NULL OR d.locked_until < $1::timestamptz)
        RETURNING d.*`,
      [now.toISOString(), limit, this.config.WEBHOOK_ENDPOINT_CONCURRENCY, [...this.inFlight.keys()], (this.config.WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS) / 1000],
    )) as [WebhookDelivery[], number];
    return rows.map((row) => this.deliveries.create(row));
  }

  private async deliver(delivery: WebhookDelivery, subscription: WebhookSubscription | undefined): Promise<void> {
    if (!subscription?.enabled) {
      await this.end(delivery, 'failed', null, subscription ? `The subscription is disabled${subscription.disabled_reason ? `: ${subscription.disabled_reason}` : ''}` : 'The subscription was deleted');
      return;
    }
    const now = new Date();
    const payload = { event: delivery.event, timestamp: new Date(delivery.event_at).toISOString(), data: delivery.data };
    const signed = signDelivery(delivery.id, payload, this.webhooks.signingSecrets(subscription, now), now);
    const dispatcher = this.egresses.for(egressSettingsOf(this.config)).dispatcher;
    const outcome = await sendDelivery(subscription.url, signed, dispatcher, this.config.WEBHOOK_TIMEOUT_MS);
    const verdict = this.verdict(outcome, delivery.attempt_count + 1);
    webhookAttempts.publish({ outcome: verdict.kind, seconds: outcome.attempt.latency_ms / 1000 });
    switch (verdict.kind) {
      case 'delivered':
        return this.end(delivery, 'delivered', outcome.attempt, null);
      case 'retry':
        return this.retry(delivery, outcome.attempt, verdict.delayMs);
      case 'gone':
        await this.end(delivery, 'failed', outcome.attempt, 'The endpoint answered 410 Gone');
        return this.disable(subscription, 'The endpoint answered 410 Gone: the subscription was disabled');
      case 'exhausted': {
        const reason = `Delivery ${delivery.id} failed all ${this.schedule.length + 1} attempts of the retry schedule (last: ${attemptSummary(outcome.attempt)}): the subscription was disabled`;
        await this.end(delivery, 'failed', outcome.attempt, attemptSummary(outcome.attempt));
        return this.disable(subscription, reason);
      }
    }
  }

  /** 2xx delivered; 410 gone; else a retry after the schedule's next step (later when `Retry-After` asks, up to a day), or exhausted. */
  private verdict({ attempt, retryAfterSeconds }: SendOutcome, attempts: number): Verdict {
    const status = attempt.status_code;
    if (status !== null && status >= 200 && status < 300) return { kind: 'delivered' };
    if (status === 410) return { kind: 'gone' };
    const step = this.schedule[attempts - 1];
    if (step === undefined) return { kind: 'exhausted' };
    const scheduled = step * (1 - JITTER + Math.random() * 2 * JITTER);
    return { kind: 'retry', delayMs: Math.max(scheduled, Math.min((retryAfterSeconds ?? 0) * 1000, MAX_RETRY_AFTER_MS)) };
  }

  private async retry(delivery: WebhookDelivery, attempt: DeliveryAttempt, delayMs: number): Promise<void> {
    await this.deliveries.query(
      `UPDATE webhook_deliveries SET attempt_count = attempt_count + 1, attempts = attempts || $2::jsonb, last_error = $3,
              next_attempt_at = $4::timestamptz, locked_until = NULL
        WHERE id = $1 AND status = 'pending'`,
      [delivery.id, JSON.stringify([attempt]), attemptSummary(attempt), new Date(Date.now() + delayMs).toISOString()],
    );
  }

  private async end(delivery: WebhookDelivery, status: 'delivered' | 'failed', attempt: DeliveryAttempt | null, error: string | null): Promise<void> {
    await this.deliveries.query(
      `UPDATE webhook_deliveries SET status = $2, attempt_count = attempt_count + $3, attempts = attempts || $4::jsonb, last_error = $5,
              delivered_at = CASE WHEN $2 = 'delivered' THEN $6::timestamptz END, locked_until = NULL
        WHERE id = $1 AND status = 'pending'`,
      [delivery.id, status, attempt ? 1 : 0, JSON.stringify(attempt ? [attempt] : []), error, new Date().toISOString()],
    );
  }

  /** Disables the subscription (WebhooksService.disable: its pending deliveries end, the account's other subscriptions hear of it). */
  private async disable(subscription: WebhookSubscription, reason: string): Promise<void> {
    if (!(await this.webhooks.disable(subscription, reason))) return;
    webhooksDisabled.publish({});
    this.logger.warn(`Webhook ${subscription.id} of account ${subscription.account_id} disabled: ${reason}`);
  }

  /** Publishes the outbox's depth for metrics (webhookAudits). */
  private async audit(now: Date): Promise<void> {
    this.lastAudit = now.getTime();
    const [row] = (await this.deliveries.query(
      `SELECT count(*)::int AS pending,
              count(*) FILTER (WHERE next_attempt_at <= $1::timestamptz)::int AS due,
              coalesce(extract(epoch FROM $1::timestamptz - min(next_attempt_at) FILTER (WHERE next_attempt_at <= $1::timestamptz)), 0)::float AS oldest,
              (SELECT count(*)::int FROM webhook_subscriptions WHERE NOT enabled AND disabled_reason IS NOT NULL) AS disabled
         FROM webhook_deliveries WHERE status = 'pending'`,
      [now.toISOString()],
    )) as Array<{ pending: number; due: number; oldest: number; disabled: number }>;
    webhookAudits.publish({ pending: row.pending, due: row.due, oldestDueAgeSeconds: row.oldest, disabledSubscriptions: row.disabled });
  }
}

function attemptSummary(attempt: DeliveryAttempt): string {
  return attempt.error ?? `HTTP ${attempt.status_code}`;
}
