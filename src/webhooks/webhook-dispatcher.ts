import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import { GroupCommit } from '../common/group-commit';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { executionsSettled, webhookAttempts, webhookAudits, webhooksDisabled } from '../common/probes';
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

/** An attempt's mark on its delivery row: a retry keeps it pending until `next_attempt_at`; an end sets delivered or failed. */
interface AttemptOutcome {
  id: string;
  status: 'pending' | 'delivered' | 'failed';
  /** 1, or 0 when the delivery ended without an attempt (its subscription gone or disabled). */
  attempted: 0 | 1;
  attempt: DeliveryAttempt[];
  error: string | null;
  next_attempt_at?: string;
  delivered_at?: string | null;
}

/** How often executions' ends look again whether any subscription is enabled (the poll delivers meanwhile). */
const SUBSCRIPTIONS_CHECK_MS = 5_000;
/** How long a freed slot waits for others before they claim together. */
const WAKE_DELAY_MS = 25;
/** Outcomes written in one statement at most. */
const MAX_OUTCOMES_PER_WRITE = 128;

/** What one attempt's answer means for the delivery and its subscription. */
type Verdict = { kind: 'delivered' } | { kind: 'gone' } | { kind: 'retry'; delayMs: number } | { kind: 'exhausted' };

/**
 * Sends the outbox (src/webhooks/webhook-outbox.ts): every WEBHOOK_POLL_MS it claims due
 * deliveries with a lease (a conditional UPDATE, so two processes never hold one row; a row whose
 * holder died is due again when its lease lapses: at least once), and sends each on its own.
 * At most WEBHOOK_CONCURRENCY at once, and at most WEBHOOK_ENDPOINT_CONCURRENCY to one
 * subscription: a slow or dead endpoint holds only its own slots, never the others'.
 * Runs in processes of the worker role (the embedded process holds both roles, so it delivers too).
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WebhookDispatcher.name);
  private readonly schedule: number[];
  private readonly inFlight = new Map<string, number>();
  private readonly sending = new Set<Promise<void>>();
  private readonly outcomes = new GroupCommit<AttemptOutcome, void>((outcomes) => this.record(outcomes), MAX_OUTCOMES_PER_WRITE);
  private timer?: NodeJS.Timeout;
  /** The claim under way, if any: one at a time, and shutdown waits for it. */
  private claiming: Promise<void> | null = null;
  private waking?: NodeJS.Timeout;
  /** Whether an enabled subscription existed at the last look (every SUBSCRIPTIONS_CHECK_MS while executions end). */
  private anySubscription = true;
  private subscriptionsCheckedAt = 0;
  /** A pass was asked for while a claim was under way. */
  private again = false;
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
    subscribe(executionsSettled.name, this.onSettled);
  }

  /**
   * An execution ended (here or in another process): its deliveries are due now — when any
   * subscription is enabled at all; else the wake's claim would only cost the executions' path.
   */
  private readonly onSettled = () => {
    if (Date.now() - this.subscriptionsCheckedAt >= SUBSCRIPTIONS_CHECK_MS) {
      // Unknown (the database unreachable): wake, as before any look.
      this.checkSubscriptions().catch(() => (this.anySubscription = true));
    }
    if (this.anySubscription) this.wake();
  };

  private async checkSubscriptions(): Promise<void> {
    this.subscriptionsCheckedAt = Date.now();
    const [row] = (await this.subscriptions.query('SELECT EXISTS (SELECT 1 FROM webhook_subscriptions WHERE enabled) AS any')) as Array<{ any: boolean }>;
    this.anySubscription = row.any;
  }

  /** Stops claiming and lets the attempts under way end (their rows stay leased, then due again). */
  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.waking);
    unsubscribe(executionsSettled.name, this.onSettled);
    await this.claiming;
    await Promise.allSettled([...this.sending]);
  }

  /** One claim of due deliveries, each then sent without waiting for the others. */
  async pass(now = new Date()): Promise<void> {
    if (this.stopped) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    const room = this.config.WEBHOOK_CONCURRENCY - this.sending.size;
    if (room <= 0) return;
    this.again = false;
    this.claiming = this.claimAndSend(now, room);
    await this.claiming;
    this.claiming = null;
    // A slot freed while it claimed: what that slot's subscription has due was not claimable then.
    if (this.again) void this.pass();
  }

  /**
   * A freed slot, or an execution's end, claims soon without waiting for the poll (which is left
   * to find retries come due); what happens within WAKE_DELAY_MS shares one claim, so claims do
   * not crowd out the writes of the outcomes under load.
   */
  private wake(): void {
    if (this.waking || this.stopped) return;
    this.waking = setTimeout(() => {
      this.waking = undefined;
      void this.pass();
    }, WAKE_DELAY_MS);
  }

  private async claimAndSend(now: Date, room: number): Promise<void> {
    try {
      if (webhookAudits.hasSubscribers && now.getTime() - this.lastAudit >= AUDIT_EVERY_MS) {
        await this.audit(now).catch((err: Error) => this.logger.warn(`Counting the webhook outbox failed: ${err.message}`));
      }
      const claimed = await this.claim(now, room);
      if (claimed.length === 0) return;
      const subscriptions = new Map((await this.subscriptions.findBy({ id: In([...new Set(claimed.map((d) => d.subscription_id))]) })).map((s) => [s.id, s]));
      for (const delivery of claimed) {
        this.inFlight.set(delivery.subscription_id, (this.inFlight.get(delivery.subscription_id) ?? 0) + 1);
        let released = false;
        // The endpoint's slot frees when its answer is in; the row stays leased until its outcome is written.
        const release = () => {
          if (released) return;
          released = true;
          const left = (this.inFlight.get(delivery.subscription_id) ?? 1) - 1;
          if (left > 0) this.inFlight.set(delivery.subscription_id, left);
          else this.inFlight.delete(delivery.subscription_id);
          this.wake();
        };
        const sending: Promise<void> = this.deliver(delivery, subscriptions.get(delivery.subscription_id), release)
          .catch((err: Error) => this.logger.error(`Webhook delivery ${delivery.id} failed to record its attempt: ${err.message}`))
          .finally(() => {
            this.sending.delete(sending);
            release();
          });
        this.sending.add(sending);
      }
    } catch (err) {
      this.logger.error(`Claiming webhook deliveries failed: ${(err as Error).message}`);
    }
  }

  /**
   * Due pending deliveries not leased (or whose lease lapsed), at most WEBHOOK_ENDPOINT_CONCURRENCY
   * per subscription counting those this process is sending to it; accounts take turns
   * (each account's oldest first, then each one's second…), so one account's backlog never makes
   * another's deliveries wait behind it. Each subscription with pending rows is found by a skip
   * scan of the index and gives at most its cap of oldest due rows: a claim reads what it may
   * take, not the whole backlog. The UPDATE re-checks the lease of each row it takes, so of two processes picking
   * the same row only the first takes it.
   */
  private async claim(now: Date, limit: number): Promise<WebhookDelivery[]> {
    const [rows] = (await this.deliveries.query(
      `WITH RECURSIVE pending_subscriptions(id) AS (
         (SELECT subscription_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY subscription_id LIMIT 1)
         UNION ALL
         SELECT (SELECT w.subscription_id FROM webhook_deliveries w WHERE w.status = 'pending' AND w.subscription_id > p.id ORDER BY w.subscription_id LIMIT 1)
           FROM pending_subscriptions p WHERE p.id IS NOT NULL),
       candidates AS (
         SELECT c.id, c.account_id, c.next_attempt_at
           FROM pending_subscriptions p
           JOIN LATERAL (
             SELECT w.id, w.account_id, w.next_attempt_at FROM webhook_deliveries w
              WHERE w.status = 'pending' AND w.subscription_id = p.id AND w.next_attempt_at <= $1::timestamptz
                AND (w.locked_until IS NULL OR w.locked_until < $1::timestamptz)
              ORDER BY w.next_attempt_at, w.id
              LIMIT greatest($3 - coalesce(($4::jsonb ->> p.id)::int, 0), 0)) c ON true
          WHERE p.id IS NOT NULL),
       picked AS (
         SELECT id FROM (SELECT id, next_attempt_at, row_number() OVER (PARTITION BY account_id ORDER BY next_attempt_at, id) AS turn FROM candidates) fair
          ORDER BY turn, next_attempt_at LIMIT $2)
       UPDATE webhook_deliveries d SET locked_until = $1::timestamptz + make_interval(secs => $5)
         FROM picked
        WHERE d.id = picked.id AND d.status = 'pending' AND (d.locked_until IS NULL OR d.locked_until < $1::timestamptz)
        RETURNING d.*`,
      [now.toISOString(), limit, this.config.WEBHOOK_ENDPOINT_CONCURRENCY, JSON.stringify(Object.fromEntries(this.inFlight)), (this.config.WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS) / 1000],
    )) as [WebhookDelivery[], number];
    return rows.map((row) => this.deliveries.create(row));
  }

  private async deliver(delivery: WebhookDelivery, subscription: WebhookSubscription | undefined, answered: () => void): Promise<void> {
    if (!subscription?.enabled) {
      await this.end(delivery, 'failed', null, subscription ? `The subscription is disabled${subscription.disabled_reason ? `: ${subscription.disabled_reason}` : ''}` : 'The subscription was deleted');
      return;
    }
    const now = new Date();
    const payload = { event: delivery.event, timestamp: new Date(delivery.event_at).toISOString(), data: delivery.data };
    const signed = signDelivery(delivery.id, payload, this.webhooks.signingSecrets(subscription, now), now);
    const dispatcher = this.egresses.for(egressSettingsOf(this.config)).dispatcher;
    const outcome = await sendDelivery(subscription.url, signed, dispatcher, this.config.WEBHOOK_TIMEOUT_MS);
    answered();
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

  private retry(delivery: WebhookDelivery, attempt: DeliveryAttempt, delayMs: number): Promise<void> {
    return this.outcomes.submit({ id: delivery.id, status: 'pending', attempted: 1, attempt: [attempt], error: attemptSummary(attempt), next_attempt_at: new Date(Date.now() + delayMs).toISOString() });
  }

  private end(delivery: WebhookDelivery, status: 'delivered' | 'failed', attempt: DeliveryAttempt | null, error: string | null): Promise<void> {
    const now = new Date().toISOString();
    return this.outcomes.submit({ id: delivery.id, status, attempted: attempt ? 1 : 0, attempt: attempt ? [attempt] : [], error, delivered_at: status === 'delivered' ? now : null });
  }

  /** Records attempts' outcomes, many in one statement (the GroupCommit batches what ends while a write is under way). */
  private async record(outcomes: AttemptOutcome[]): Promise<void[]> {
    await this.deliveries.query(
      `UPDATE webhook_deliveries d
          SET status = o.status, attempt_count = d.attempt_count + o.attempted, attempts = d.attempts || o.attempt, last_error = o.error,
              next_attempt_at = coalesce(o.next_attempt_at, d.next_attempt_at), delivered_at = o.delivered_at, locked_until = NULL
         FROM jsonb_to_recordset($1::jsonb) AS o(id text, status text, attempted int, attempt jsonb, error text, next_attempt_at timestamptz, delivered_at timestamptz)
        WHERE d.id = o.id AND d.status = 'pending'`,
      [JSON.stringify(outcomes)],
    );
    return outcomes.map(() => undefined);
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
