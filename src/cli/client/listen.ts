/**
 * `tos listen --forward-to <url>`: the account's execution events from GET /v1/ws re-posted to a
 * local HTTP server, one POST per event (docs/cli.md#tos-listen), like `stripe listen`: signed
 * with a session secret exactly as the service signs webhook deliveries. A dropped socket
 * reconnects and resumes after the last event forwarded.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { isWebhookSecret, newWebhookSecret, signDelivery } from '../../webhooks/webhook-signing';
import { ClientError, Connection, EXIT } from './api-client';

export interface ListenOptions {
  forwardTo: URL;
  /** Event names to forward; null = all. */
  events: ReadonlySet<string> | null;
  /** The `whsec_…` secret the forwards are signed with. */
  secret: string;
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

/**
 * The session's signing secret: `--secret-file`, else TOS_LISTEN_SECRET, else a new one (printed
 * at start), so a receiver can keep one secret across sessions by pinning it.
 */
export function listenSecret(secretFile: string | undefined, env: NodeJS.ProcessEnv = process.env): { secret: string; pinned: boolean } {
  let text: string | undefined;
  let from: string;
  if (secretFile !== undefined) {
    from = `--secret-file ${secretFile}`;
    try {
      text = readFileSync(secretFile, 'utf8').trim();
    } catch (err) {
      throw new ClientError('INVALID_INPUT', `${from}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 'name a file holding one whsec_… secret', EXIT.usage);
    }
  } else {
    from = 'TOS_LISTEN_SECRET';
    text = env.TOS_LISTEN_SECRET || undefined;
  }
  if (text === undefined) return { secret: newWebhookSecret(), pinned: false };
  if (!isWebhookSecret(text)) throw new ClientError('INVALID_INPUT', `${from}: not a webhook secret (whsec_ + base64 of 24 to 64 bytes)`, 'omit it and tos listen makes one, printed at start', EXIT.usage);
  return { secret: text, pinned: true };
}

/**
 * The webhook-id of an event: a digest of its name and data, so the same event replayed after a
 * reconnect (it gets a new `seq` and `timestamp`) carries the same id and a receiver deduplicates it.
 */
export function forwardId(event: { event: string; data: unknown }): string {
  return `msg_${createHash('sha256').update(`${event.event}\n${JSON.stringify(event.data)}`).digest('hex').slice(0, 32)}`;
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
          if (!options.events || options.events.has(event.event)) forwarding = forwarding.then(() => forward(event, options.forwardTo, options.secret, out));
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
 * One POST of the webhook payload (SPEC §6.3) signed as a delivery is, with the event's name in
 * X-TOS-Event; the outcome is printed, never thrown.
 */
async function forward(event: LiveEventMessage, url: URL, secret: string, out: NodeJS.WritableStream): Promise<void> {
  const { body, headers } = signDelivery(forwardId(event), { event: event.event, timestamp: event.timestamp, data: event.data }, [secret], new Date());
  const started = Date.now();
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'x-tos-event': event.event, 'x-tos-event-seq': String(event.seq), 'user-agent': 'tos-listen' },
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
