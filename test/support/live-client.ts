/** A client of GET /v1/ws for tests: the `ws` library, every message kept, waits by predicate. */
import WebSocket from 'ws';

export interface LiveMessage {
  type: string;
  seq?: number;
  event?: string;
  subscription?: string;
  code?: string;
  data?: Record<string, any>;
  [member: string]: unknown;
}

export interface LiveClient {
  ws: WebSocket;
  messages: LiveMessage[];
  send(message: unknown): void;
  /** The first message (from `from` on) that matches; fails after `timeoutMs`. */
  next(what: string, match: (m: LiveMessage) => boolean, timeoutMs?: number, from?: number): Promise<LiveMessage>;
  /** Resolves with the close code and reason. */
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

/** Opens a socket to `${baseUrl}/v1/ws${query}` (http → ws); `key` goes in the Authorization header. */
export function connectLive(baseUrl: string, options: { key?: string; query?: string; autoPong?: boolean } = {}): Promise<LiveClient> {
  const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/v1/ws${options.query ?? ''}`, {
    headers: options.key ? { authorization: `Bearer ${options.key}` } : {},
    autoPong: options.autoPong ?? true,
  });
  const messages: LiveMessage[] = [];
  const waiters = new Set<() => void>();
  ws.on('message', (data) => {
    messages.push(JSON.parse(data.toString()) as LiveMessage);
    for (const wake of waiters) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  const client: LiveClient = {
    ws,
    messages,
    closed,
    send: (message) => ws.send(typeof message === 'string' ? message : JSON.stringify(message)),
    next: (what, match, timeoutMs = 20_000, from = 0) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = messages.slice(from).find(match);
          if (!found) return;
          cleanup();
          resolve(found);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(messages)}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
    close: () => ws.close(),
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('unexpected-response', (_request, response) => reject(Object.assign(new Error(`HTTP ${response.statusCode}`), { status: response.statusCode })));
    ws.once('error', reject);
  });
}
