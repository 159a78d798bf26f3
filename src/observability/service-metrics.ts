import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import {
  addExecutionObserver,
  cacheLookups,
  executionsAbandoned,
  executionsReconciled,
  queueAudits,
  rateLimitRefusals,
  scheduleRuns,
  scheduleTicks,
  triggerEvents,
  upstreamCalls,
  type UpstreamHealth,
  webhookAttempts,
  webhookAudits,
  webhooksDisabled,
  workerHeartbeats,
  workflowRunsEnded,
  workflowStepsStarted,
} from '../common/probes';
import { egressRefusals } from '../tools/sdk/network-errors';

const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const EXECUTION_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 300];
const LAG_BUCKETS = [0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600];

/** The queue as metrics see it (ExecutionQueue's backlog). */
export interface BacklogSource {
  readonly backend: string;
  backlog(): Promise<{ waiting: number; oldestAgeSeconds: number }>;
}

/**
 * The upstreams as metrics see them: `health` (null in a process that does not report it — workers,
 * so a sum over processes counts each upstream once per API process) and which of some ids still
 * exist, so a deleted upstream's call series leave the registry.
 */
export interface UpstreamSource {
  health(): Promise<UpstreamHealth[]> | null;
  existing(ids: string[]): Promise<Set<string>>;
}

/** Which window refused: a tool's id stays out of the label (it is in the request metrics). */
function windowOf(scope: string): string {
  if (scope.startsWith('tool ')) return 'tool';
  if (scope.startsWith('monthly')) return 'month';
  if (scope === 'API key') return 'key';
  return 'ip';
}

/**
 * This process's Prometheus registry (prom-client), labelled with its role. Request metrics are
 * fed by the Fastify hook, everything else by the core's probes, subscribed while the app runs.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly requestSeconds: Histogram<'method' | 'route'>;
  private readonly started: Counter<'tool'>;
  private readonly finished: Counter<'tool' | 'status'>;
  private readonly executionSeconds: Histogram<'tool' | 'status'>;
  private readonly cache: Counter<'result'>;
  private readonly refusals: Counter<'window'>;
  private readonly egress: Counter;
  private readonly replays: Counter;
  private readonly abandoned: Counter<'by' | 'reason'>;
  private readonly reconciled: Counter;
  private readonly withoutJob: Gauge;
  private readonly oldestQueued: Gauge;
  private readonly heartbeats: Counter;
  private readonly lastHeartbeat: Gauge;
  private readonly workersLost: Counter;
  private readonly webhookAttempts: Counter<'outcome'>;
  private readonly webhookAttemptSeconds: Histogram;
  private readonly webhooksDisabled: Counter;
  private readonly webhookOutbox: Gauge<'state'>;
  private readonly webhookOldestDue: Gauge;
  private readonly webhookSubscriptionsDisabled: Gauge;
  private readonly tickLag: Histogram<'outcome'>;
  private readonly runs: Counter<'status'>;
  private readonly triggerEvents: Counter<'source' | 'status'>;
  private readonly workflowRuns: Counter<'status'>;
  private readonly workflowRunSeconds: Histogram<'status'>;
  private readonly workflowSteps: Counter<'retry'>;
  private readonly upstreamCalls: Counter<'upstream' | 'outcome'>;
  private readonly upstreamCallSeconds: Histogram<'upstream'>;
  /** The outcomes each upstream's calls were counted under, so a deleted upstream's series can be removed. */
  private readonly upstreamOutcomes = new Map<string, Set<string>>();
  private readonly unsubscribers: Array<() => void> = [];

  constructor(role: string, queue: BacklogSource, upstreams: UpstreamSource) {
    this.registry.setDefaultLabels({ role });
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'tos_' });
    this.requests = new Counter({ name: 'tos_http_requests_total', help: 'HTTP requests by route template and status.', labelNames: ['method', 'route', 'status'], registers });
    this.requestSeconds = new Histogram({ name: 'tos_http_request_duration_seconds', help: 'HTTP request duration by route template.', labelNames: ['method', 'route'], buckets: REQUEST_BUCKETS, registers });
    this.started = new Counter({ name: 'tos_executions_started_total', help: 'Tool executions started in this process.', labelNames: ['tool'], registers });
    this.finished = new Counter({ name: 'tos_executions_finished_total', help: 'Tool executions finished in this process, by status.', labelNames: ['tool', 'status'], registers });
    this.executionSeconds = new Histogram({ name: 'tos_execution_duration_seconds', help: 'Time inside the tool.', labelNames: ['tool', 'status'], buckets: EXECUTION_BUCKETS, registers });
    this.cache = new Counter({ name: 'tos_cache_lookups_total', help: 'Result cache lookups.', labelNames: ['result'], registers });
    this.refusals = new Counter({ name: 'tos_rate_limit_refusals_total', help: 'Requests refused by a rate limit or quota, by window.', labelNames: ['window'], registers });
    this.egress = new Counter({ name: 'tos_egress_refusals_total', help: 'Outbound calls refused by the egress policy.', registers });
    this.replays = new Counter({ name: 'tos_idempotent_replays_total', help: 'Invocations answered by replaying an idempotent request.', registers });
    this.abandoned = new Counter({ name: 'tos_executions_abandoned_total', help: 'Executions ended for want of a runner, by who ended them (sweeper, reconciler, lost-worker, restart) and why.', labelNames: ['by', 'reason'], registers });
    this.reconciled = new Counter({ name: 'tos_executions_reconciled_total', help: 'Queued executions whose lost job this worker queued again.', registers });
    this.withoutJob = new Gauge({ name: 'tos_executions_queued_without_job', help: "Queued executions with no job in the queue at this worker's last reconciler pass.", registers });
    this.oldestQueued = new Gauge({ name: 'tos_executions_oldest_queued_age_seconds', help: "How long the oldest queued execution had waited (database) at this worker's last reconciler pass.", registers });
    this.heartbeats = new Counter({ name: 'tos_worker_heartbeats_total', help: 'Heartbeats this worker recorded.', registers });
    this.lastHeartbeat = new Gauge({ name: 'tos_worker_last_heartbeat_seconds', help: "Unix time of this worker's last heartbeat.", registers });
    this.workersLost = new Counter({ name: 'tos_workers_lost_total', help: 'Workers this process found had stopped their heartbeat.', registers });
    this.webhookAttempts = new Counter({ name: 'tos_webhook_attempts_total', help: 'Webhook delivery attempts by outcome: delivered (2xx), retry, gone (410) or exhausted (the last of the schedule failed).', labelNames: ['outcome'], registers });
    this.webhookAttemptSeconds = new Histogram({ name: 'tos_webhook_attempt_duration_seconds', help: 'Time from sending a webhook to its answer (or the attempt ending without one).', buckets: REQUEST_BUCKETS, registers });
    this.webhooksDisabled = new Counter({ name: 'tos_webhook_subscriptions_disabled_total', help: 'Subscriptions this process disabled (410 Gone, or the retry schedule exhausted).', registers });
    this.webhookOutbox = new Gauge({ name: 'tos_webhook_outbox_deliveries', help: "Pending webhook deliveries at this dispatcher's last audit: all pending, and those due now.", labelNames: ['state'], registers });
    this.webhookOldestDue = new Gauge({ name: 'tos_webhook_oldest_due_age_seconds', help: "How long the oldest due webhook delivery had waited at this dispatcher's last audit.", registers });
    this.webhookSubscriptionsDisabled = new Gauge({ name: 'tos_webhook_subscriptions_disabled', help: "Subscriptions the service has disabled (and their owners have not re-enabled), at this dispatcher's last audit.", registers });
    this.tickLag = new Histogram({ name: 'tos_schedule_tick_lag_seconds', help: 'How long after its time a schedule tick was claimed, by outcome (run, missed).', labelNames: ['outcome'], buckets: LAG_BUCKETS, registers });
    this.runs = new Counter({ name: 'tos_schedule_runs_total', help: 'Schedule runs ended in this process, by status (started, skipped, refused, failed).', labelNames: ['status'], registers });
    this.triggerEvents = new Counter({ name: 'tos_trigger_events_total', help: 'Trigger events, by source (inbound, internal) and status (started, filtered, refused, failed, duplicate).', labelNames: ['source', 'status'], registers });
    this.workflowRuns = new Counter({ name: 'tos_workflow_runs_finished_total', help: 'Workflow runs this process ended, by status.', labelNames: ['status'], registers });
    this.workflowRunSeconds = new Histogram({ name: 'tos_workflow_run_duration_seconds', help: 'Workflow run duration, start to end.', labelNames: ['status'], buckets: EXECUTION_BUCKETS, registers });
    this.workflowSteps = new Counter({ name: 'tos_workflow_steps_started_total', help: 'Workflow step calls this process queued; retry "true" for a second or later attempt.', labelNames: ['retry'], registers });
    // The registry collects its metrics at once: both wait for the one look for deleted upstreams.
    let forgetting: Promise<void> | undefined;
    const collect = () => (forgetting ??= this.forgetDeletedUpstreams(upstreams).finally(() => (forgetting = undefined)));
    this.upstreamCalls = new Counter({
      name: 'tos_upstream_calls_total',
      help: 'Calls of upstream tools in this process, by upstream id and outcome (ok, refused, cancelled, invalid_input, unavailable, failed).',
      labelNames: ['upstream', 'outcome'],
      registers,
      collect,
    });
    this.upstreamCallSeconds = new Histogram({ name: 'tos_upstream_call_duration_seconds', help: 'Time an upstream call took, by upstream id.', labelNames: ['upstream'], buckets: REQUEST_BUCKETS, registers, collect });
    this.registerUpstreamHealth(upstreams, registers);
    const waiting = new Gauge({ name: 'tos_queue_waiting_jobs', help: 'Async executions waiting for a worker.', labelNames: ['backend'], registers });
    new Gauge({
      name: 'tos_queue_oldest_job_age_seconds',
      help: 'How long the oldest waiting job has waited.',
      labelNames: ['backend'],
      registers,
      async collect() {
        // One backlog read feeds both gauges: the depth is collected first, by registration order.
        const backlog = await queue.backlog().catch(() => ({ waiting: NaN, oldestAgeSeconds: NaN }));
        waiting.set({ backend: queue.backend }, backlog.waiting);
        this.set({ backend: queue.backend }, backlog.oldestAgeSeconds);
      },
    });
  }

  /**
   * Upstreams' tool count, up and last contact, read from their records at each scrape (API
   * processes). The registry collects its metrics at once, so the three share one read; each
   * gauge is reset first, so a deleted upstream leaves them.
   */
  private registerUpstreamHealth(upstreams: UpstreamSource, registers: Registry[]): void {
    let reading: Promise<UpstreamHealth[]> | undefined;
    const read = () => (reading ??= Promise.resolve(upstreams.health() ?? []).catch(() => []).finally(() => (reading = undefined)));
    const gauge = (name: string, help: string, valueOf: (upstream: UpstreamHealth) => number | null) =>
      new Gauge({
        name,
        help,
        labelNames: ['upstream'],
        registers,
        async collect() {
          const health = await read();
          this.reset();
          for (const upstream of health) {
            const value = valueOf(upstream);
            if (value !== null) this.set({ upstream: upstream.id }, value);
          }
        },
      });
    gauge('tos_upstream_tools', 'Tools the last discovery of the upstream found (after its filter).', (upstream) => upstream.tools);
    gauge('tos_upstream_up', '1 when the upstream is enabled and its last discovery succeeded, else 0.', (upstream) => (upstream.up ? 1 : 0));
    gauge('tos_upstream_last_contact_seconds', 'Unix time of the last successful discovery of the upstream.', (upstream) => upstream.lastContactSeconds);
  }

  /** Removes the call series of upstreams deleted since they were counted, so the registry stays as large as the upstreams are many. */
  private async forgetDeletedUpstreams(upstreams: UpstreamSource): Promise<void> {
    if (this.upstreamOutcomes.size === 0) return;
    const existing = await upstreams.existing([...this.upstreamOutcomes.keys()]).catch(() => null);
    if (!existing) return;
    for (const [upstream, outcomes] of this.upstreamOutcomes) {
      if (existing.has(upstream)) continue;
      for (const outcome of outcomes) this.upstreamCalls.remove({ upstream, outcome });
      this.upstreamCallSeconds.remove({ upstream });
      this.upstreamOutcomes.delete(upstream);
    }
  }

  /** Starts listening to the core's probes. */
  start(): void {
    const listeners: Array<[string, (message: unknown) => void]> = [
      [cacheLookups.name as string, (m) => this.cache.inc({ result: (m as { hit: boolean }).hit ? 'hit' : 'miss' })],
      [rateLimitRefusals.name as string, (m) => this.refusals.inc({ window: windowOf((m as { scope: string }).scope) })],
      [egressRefusals.name as string, () => this.egress.inc()],
      [executionsAbandoned.name as string, (m) => this.abandoned.inc(m as { by: string; reason: string })],
      [executionsReconciled.name as string, () => this.reconciled.inc()],
      [scheduleTicks.name as string, (m) => this.tickLag.observe({ outcome: (m as { outcome: string }).outcome }, (m as { lagSeconds: number }).lagSeconds)],
      [scheduleRuns.name as string, (m) => this.runs.inc(m as { status: string })],
      [triggerEvents.name as string, (m) => this.triggerEvents.inc(m as { source: string; status: string })],
      [
        queueAudits.name as string,
        (m) => {
          const audit = m as { withoutJob: number; oldestQueuedAgeSeconds: number };
          this.withoutJob.set(audit.withoutJob);
          this.oldestQueued.set(audit.oldestQueuedAgeSeconds);
        },
      ],
      [
        webhookAttempts.name as string,
        (m) => {
          const attempt = m as { outcome: string; seconds: number };
          this.webhookAttempts.inc({ outcome: attempt.outcome });
          this.webhookAttemptSeconds.observe(attempt.seconds);
        },
      ],
      [webhooksDisabled.name as string, () => this.webhooksDisabled.inc()],
      [
        upstreamCalls.name as string,
        (m) => {
          const { upstreamId: upstream, outcome, seconds } = m as { upstreamId: string; outcome: string; seconds: number };
          this.upstreamCalls.inc({ upstream, outcome });
          this.upstreamCallSeconds.observe({ upstream }, seconds);
          let outcomes = this.upstreamOutcomes.get(upstream);
          if (!outcomes) this.upstreamOutcomes.set(upstream, (outcomes = new Set()));
          outcomes.add(outcome);
        },
      ],
      [
        webhookAudits.name as string,
        (m) => {
          const audit = m as { pending: number; due: number; oldestDueAgeSeconds: number; disabledSubscriptions: number };
          this.webhookOutbox.set({ state: 'pending' }, audit.pending);
          this.webhookOutbox.set({ state: 'due' }, audit.due);
          this.webhookOldestDue.set(audit.oldestDueAgeSeconds);
          this.webhookSubscriptionsDisabled.set(audit.disabledSubscriptions);
        },
      ],
      [
        workflowRunsEnded.name as string,
        (m) => {
          const { status, durationMs } = m as { status: string; durationMs: number };
          this.workflowRuns.inc({ status });
          this.workflowRunSeconds.observe({ status }, durationMs / 1000);
        },
      ],
      [workflowStepsStarted.name as string, (m) => this.workflowSteps.inc({ retry: String((m as { attempt: number }).attempt > 1) })],
      [
        workerHeartbeats.name as string,
        (m) => {
          this.heartbeats.inc();
          this.lastHeartbeat.set(Date.now() / 1000);
          this.workersLost.inc((m as { lost: string[] }).lost.length);
        },
      ],
    ];
    for (const [name, listener] of listeners) {
      subscribe(name, listener);
      this.unsubscribers.push(() => unsubscribe(name, listener));
    }
    this.unsubscribers.push(
      addExecutionObserver(async (info, run) => {
        this.started.inc({ tool: info.toolId });
        const end = this.executionSeconds.startTimer({ tool: info.toolId });
        let status = 'error';
        try {
          return await run().then((outcome) => ((status = outcome.status), outcome));
        } finally {
          end({ status });
          this.finished.inc({ tool: info.toolId, status });
        }
      }),
    );
  }

  stop(): void {
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
  }

  /** One answered request; `route` is the template (`/v1/tools/:tool_id/invoke`), never the raw URL. */
  recordRequest(method: string, route: string, status: number, seconds: number, replayed: boolean): void {
    this.requests.inc({ method, route, status });
    this.requestSeconds.observe({ method, route }, seconds);
    if (replayed) this.replays.inc();
  }
}
