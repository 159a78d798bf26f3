/**
 * A loopback HTTPS receiver in the shape of PagerDuty's Events API v2 (`POST /v2/enqueue`): it
 * checks events as PagerDuty documents them and answers PagerDuty's bodies (202 with dedup_key,
 * 400 "invalid event" with errors, 429 throttling).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface PagerDutyReceiver {
  /** `https://host:port/v2/enqueue` */
  url: string;
  /** Events accepted, in order. */
  events: Record<string, unknown>[];
  /** Routing keys answered 429 (PagerDuty's rate limit per integration key). */
  throttled: Set<string>;
  stop(): Promise<void>;
}

const ACTIONS = ['trigger', 'acknowledge', 'resolve'];
const SEVERITIES = ['critical', 'error', 'warning', 'info'];

/** PagerDuty's validation errors for an event, empty when it is valid. */
function problemsOf(event: Record<string, any>): string[] {
  const problems: string[] = [];
  if (typeof event.routing_key !== 'string' || event.routing_key.length !== 32) problems.push("Length of 'routing_key' is incorrect (should be 32 characters)");
  if (!ACTIONS.includes(event.event_action)) problems.push("'event_action' is invalid (must be one of the following: 'trigger', 'acknowledge' or 'resolve')");
  if (event.event_action === 'trigger') {
    const payload = event.payload ?? {};
    if (typeof payload.summary !== 'string' || payload.summary.length === 0 || payload.summary.length > 1024) problems.push("'payload.summary' is missing or blank");
    if (typeof payload.source !== 'string' || payload.source.length === 0) problems.push("'payload.source' is missing or blank");
    if (!SEVERITIES.includes(payload.severity)) problems.push("'payload.severity' is invalid (must be one of the following: 'critical', 'warning', 'error' or 'info')");
  } else if (typeof event.dedup_key !== 'string' || event.dedup_key.length === 0) {
    problems.push("'dedup_key' is required for acknowledge and resolve events");
  }
  return problems;
}

export async function startPagerDutyReceiver(tls: { cert: string; key: string }, options: { host?: string; port?: number } = {}): Promise<PagerDutyReceiver> {
  const events: Record<string, unknown>[] = [];
  const throttled = new Set<string>();
  const server: Server = createServer(tls, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
      if (req.method !== 'POST' || req.url !== '/v2/enqueue') return send(404, { status: 'not found' });
      let event: Record<string, any>;
      try {
        event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(400, { status: 'invalid event', message: 'Event object is invalid', errors: ['Invalid JSON'] });
      }
      if (throttled.has(event.routing_key)) return send(429, { status: 'throttle event', message: 'Requests for this service are arriving too quickly. Please retry later.' }, { 'retry-after': '30' });
      const problems = problemsOf(event);
      if (problems.length > 0) return send(400, { status: 'invalid event', message: 'Event object is invalid', errors: problems });
      const dedupKey = event.dedup_key ?? randomBytes(16).toString('hex');
      events.push({ ...event, dedup_key: dedupKey });
      send(202, { status: 'success', message: 'Event processed', dedup_key: dedupKey });
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  return {
    url: `https://${host}:${(server.address() as AddressInfo).port}/v2/enqueue`,
    events,
    throttled,
    stop: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
