/**
 * `tos listen --forward-to <url>`: the account's execution events from GET /v1/ws re-posted to a
 * local HTTP server, one POST per event (docs/cli.md#tos-listen), like `stripe listen`. A dropped
 * socket reconnects and resumes after the last event forwarded.
 */
import WebSocket from 'ws';
import { ClientError, Connection, EXIT } from './api-client';

export interface ListenOptions {
  forwardTo: URL;
  /** Event names to forward; null = all. */
  events: ReadonlySet<string> | null;
  out?: NodeJS.WritableStream;
}

/** The close codes after which reconnecting cannot help (docs/executions.md#liveness-limits-close-codes). */
const FINAL_CLOSES = new Set([4401, 4403]);
const MAX_BACKOFF_MS = 30_000;
/** A forward that the local server does not answer within this long counts as failed. */
const FORWARD_TIMEOUT_MS = 10_000;

interface LiveEventMessage {
  type: 'event';
  seq: number;
  event: string;
  timestamp: string;
  data: Record<string, unknown>;
}

export function parseForwardUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ClientError('INVALID_INPUT', `--forward-to: not a URL: ${text}`, 'e.g. --forward-to http://127.0.0.1:4000/webhooks', EXIT.usage);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ClientError('INVALID_INPUT', '--forward-to must be an http:// or https:// URL', undefined, EXIT.usage);
  return url;
}

/** Forwards until SIGINT/SIGTERM, or rejects when the service refuses the key. */
export function listen(connection: Connection, options: ListenOptions): Promise<void> {
  const out = options.out ?? process.stderr;
  const wsUrl = `${connection.url.replace(/^http/, 'ws')}/v1/ws`;
  let lastSeq: number | undefined;
  let backoffMs = 500;
  let stopped = false;
  let socket: WebSocket | undefined;
  // Forwards go out one at a time, in the order the events came.
  let forwarding: Promise<void> = Promise.resolve();

  return new Promise((resolve, reject) => {
    const stop = () => {
      stopped = true;
      socket?.close(1000, 'tos listen stopped');
      void forwarding.then(resolve);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);

    const connect = () => {
      const ws = new WebSocket(lastSeq === undefined ? wsUrl : `${wsUrl}?after=${lastSeq}`, { headers: { authorization: `Bearer ${connection.apiKey}` } });
      socket = ws;
      ws.on('unexpected-response', (_request, response) => {
        ws.terminate();
        if (response.statusCode === 401 || response.statusCode === 403) fail(new ClientError('UNAUTHORIZED', `${wsUrl} refused the key (HTTP ${response.statusCode})`, 'check TOS_API_KEY or the profile'));
      });
      ws.on('message', (data) => {
        const message = JSON.parse(data.toString()) as { type: string; account_id?: string; message?: string; code?: string };
        if (message.type === 'ready') {
          backoffMs = 500;
          ws.send(JSON.stringify({ type: 'subscribe', all: true }));
          out.write(`Ready! Forwarding ${options.events ? [...options.events].join(', ') : 'all events'} of ${message.account_id} to ${options.forwardTo.href} (Ctrl-C to stop)\n`);
        } else if (message.type === 'event') {
          const event = message as unknown as LiveEventMessage;
          lastSeq = event.seq;
          if (!options.events || options.events.has(event.event)) forwarding = forwarding.then(() => forward(event, options.forwardTo, out));
        } else if (message.type === 'error') out.write(`tos listen: ${message.code}: ${message.message}\n`);
      });
      ws.on('error', () => undefined); // the close that follows says what to do
      ws.on('close', (code, reason) => {
        if (stopped) return;
        if (FINAL_CLOSES.has(code)) return fail(new ClientError('UNAUTHORIZED', `the service closed the socket: ${reason.toString() || code}`, 'check TOS_API_KEY and its executions:read scope'));
        out.write(`tos listen: disconnected (${code}); reconnecting in ${backoffMs} ms\n`);
        setTimeout(connect, backoffMs);
        backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
      });
    };
    const fail = (err: ClientError) => {
      if (stopped) return;
      stopped = true;
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      reject(err);
    };
    connect();
  });
}

/**
 * One POST of `{ event, timestamp, data }` (the webhook payload of SPEC §6.3, unsigned: requests
 * are not signed yet) with the event's name in X-TOS-Event; the outcome is printed, never thrown.
 */
async function forward(event: LiveEventMessage, url: URL, out: NodeJS.WritableStream): Promise<void> {
  const body = JSON.stringify({ event: event.event, timestamp: event.timestamp, data: event.data });
  const started = Date.now();
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-tos-event': event.event, 'x-tos-event-seq': String(event.seq), 'user-agent': 'tos-listen' },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    await response.arrayBuffer();
    out.write(`${event.timestamp}  ${event.event}  ${String(event.data.execution_id)}  → ${response.status} (${Date.now() - started} ms)\n`);
  } catch (err) {
    out.write(`${event.timestamp}  ${event.event}  ${String(event.data.execution_id)}  → failed: ${(err as Error).message}\n`);
  }
}
