import { AsyncLocalStorage } from 'node:async_hooks';
import { channel } from 'node:diagnostics_channel';

/**
 * Where the core reports what metrics and traces observe. A leaf module: the core imports it and
 * nothing else of observability; with nothing subscribed a probe costs a property read.
 */

export interface ExecutionInfo {
  executionId: string;
  toolId: string;
  accountId: string;
  /** The caller's credential as the principal names it (src/identity/principal.ts `keyId`). */
  keyId: string;
}
export type ExecutionObserver = <T extends { status: string }>(info: ExecutionInfo, run: () => Promise<T>) => Promise<T>;

const executionObservers: ExecutionObserver[] = [];

const runningExecution = new AsyncLocalStorage<ExecutionInfo>();

/** The execution whose tool is running here, for what the tool's own code records (the upstreams' audit log). */
export function currentExecution(): ExecutionInfo | undefined {
  return runningExecution.getStore();
}

/** Runs one tool execution inside every installed observer (metrics time it, tracing gives it a span). */
export function observeExecution<T extends { status: string }>(info: ExecutionInfo, run: () => Promise<T>): Promise<T> {
  if (executionObservers.length === 0) return runningExecution.run(info, run);
  return runningExecution.run(info, executionObservers.reduceRight<() => Promise<T>>((next, observe) => () => observe(info, next), run));
}

/** Installs an observer; returns its removal. */
export function addExecutionObserver(observer: ExecutionObserver): () => void {
  executionObservers.push(observer);
  return () => {
    const index = executionObservers.indexOf(observer);
    if (index !== -1) executionObservers.splice(index, 1);
  };
}

/** `{ hit: boolean }` per result-cache lookup. */
export const cacheLookups = channel('tos:cache.lookup');
/** `{ scope: string }` per request refused by a rate limit or quota. */
export const rateLimitRefusals = channel('tos:rate-limit.refused');
// Egress refusals (`tos:egress.refused`) are published by the SDK: src/tools/sdk/network-errors.ts.
/** `{ by: 'sweeper' | 'reconciler' | 'lost-worker' | 'restart', reason: string }` per execution the engine ended for want of a runner. */
export const executionsAbandoned = channel('tos:execution.abandoned');
/** `{}` per queued execution whose lost job the reconciler queued again. */
export const executionsReconciled = channel('tos:execution.reconciled');
/** `{ withoutJob: number, oldestQueuedAgeSeconds: number }` after each reconciler pass. */
export const queueAudits = channel('tos:queue.audit');
/** `{ status: 'success' | 'error' | 'cancelled', durationMs: number }` per workflow run its engine ended. */
export const workflowRunsEnded = channel('tos:workflow.run.ended');
/** `{ toolId: string, attempt: number }` per workflow step call queued. */
export const workflowStepsStarted = channel('tos:workflow.step.started');
/** `{ lost: string[] }` per worker heartbeat: `lost` names workers that stopped beating. */
export const workerHeartbeats = channel('tos:worker.heartbeat');
/** `{ lagSeconds: number, outcome: 'run' | 'missed' }` per schedule tick claimed: how long after its time. */
export const scheduleTicks = channel('tos:schedule.tick');
/** `{ status: string }` per schedule run ended (started, skipped, refused, failed). */
export const scheduleRuns = channel('tos:schedule.run');
/** `{ source: 'inbound' | 'internal', status: string }` per trigger event recorded or ended. */
export const triggerEvents = channel('tos:trigger.event');

/** `{}` per execution (of any process: the event bus carries it) that reached a status webhooks announce, now recorded: the dispatcher looks for deliveries without waiting for its poll. */
export const executionsSettled = channel('tos:execution.settled');
/** `{ outcome: 'delivered' | 'retry' | 'gone' | 'exhausted', seconds: number }` per webhook attempt that got an answer or failed to. */
export const webhookAttempts = channel('tos:webhook.attempt');
/** `{ pending: number, due: number, oldestDueAgeSeconds: number, disabledSubscriptions: number }` after each outbox audit of a dispatcher. */
export const webhookAudits = channel('tos:webhook.audit');
/** `{}` per subscription the service disabled (410 Gone, or the retry schedule exhausted). */
export const webhooksDisabled = channel('tos:webhook.disabled');
/** `{ upstreamId: string, outcome: string, seconds: number }` per call of an upstream tool (src/upstreams/upstream-tool.ts). */
export const upstreamCalls = channel('tos:upstream.call');

/** One upstream's health as its record holds it, for the metrics' scrape (src/upstreams/upstreams.service.ts). */
export interface UpstreamHealth {
  id: string;
  tools: number;
  up: boolean;
  lastContactSeconds: number | null;
}

/** W3C trace context (`traceparent`, `tracestate`) carried by a queued job to the worker that runs it. */
export type TraceCarrier = Record<string, string>;

interface TracePropagation {
  /** The current context as a carrier, or undefined when there is none. */
  capture(): TraceCarrier | undefined;
  /** Runs `fn` with `carrier`'s context as the current one. */
  resume<T>(carrier: TraceCarrier | undefined, fn: () => Promise<T>): Promise<T>;
}

let propagation: TracePropagation | null = null;

/** Installed by tracing while it runs; null uninstalls. */
export function setTracePropagation(next: TracePropagation | null): void {
  propagation = next;
}

export function captureTrace(): TraceCarrier | undefined {
  return propagation?.capture();
}

export function resumeTrace<T>(carrier: TraceCarrier | undefined, fn: () => Promise<T>): Promise<T> {
  return propagation && carrier ? propagation.resume(carrier, fn) : fn();
}

/** One outbound HTTP call of a tool (`ctx.http`): where it goes, never its path or query (they may hold tokens). */
export interface OutboundCall {
  method: string;
  url: URL;
}
type OutboundObserver = <T extends { status: number }>(call: OutboundCall, headers: Record<string, string>, send: () => Promise<T>) => Promise<T>;

let outboundObserver: OutboundObserver | null = null;

/** Installed by tracing while it runs; null uninstalls. */
export function setOutboundObserver(next: OutboundObserver | null): void {
  outboundObserver = next;
}

/**
 * The instrumentation hook of `ctx.http`: wrap each request's send in it, passing the headers
 * object the request will carry. With tracing on, the call gets a client span and `headers` a
 * W3C `traceparent` (added before `send` runs); otherwise `send` runs as it is.
 */
export function observeOutbound<T extends { status: number }>(call: OutboundCall, headers: Record<string, string>, send: () => Promise<T>): Promise<T> {
  return outboundObserver ? outboundObserver(call, headers, send) : send();
}
