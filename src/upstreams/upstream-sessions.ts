import type { Client } from '@modelcontextprotocol/client';

/** Idle sessions kept per upstream and credential: calls at once beyond it open sessions of their own, closed after. */
const MAX_IDLE_PER_KEY = 4;
/** Upstream-and-credential pairs with idle sessions kept in one process; the least recently used pair's are closed past it. */
const MAX_KEYS = 200;
/** An idle session is closed after this long unused. */
const IDLE_MS = 60_000;

/** One connected client and what ends it (its transport's requests, its idle timer). */
interface Session {
  client: Client;
  close(): void;
  timer?: NodeJS.Timeout;
}

/**
 * Initialized MCP client sessions kept between calls, by upstream and credential, so a call does
 * not pay `initialize` (and a GET stream's setup) each time (bench/README.md). A session serves one
 * call at a time: the call's progress and elicitation handlers are the session's while it holds it.
 * A session a call failed or was cancelled on is closed, not kept; one that reports an error while
 * idle is closed; a call on a kept session that the upstream no longer knows (HTTP 404, or 400 as
 * some servers answer an unknown session id) runs once more on a new session.
 */
export class UpstreamSessions {
  private readonly idle = new Map<string, Session[]>();

  constructor(private readonly limits = { maxIdlePerKey: MAX_IDLE_PER_KEY, maxKeys: MAX_KEYS, idleMs: IDLE_MS }) {}

  async run<T>(key: string, open: (signal: AbortSignal) => Promise<Client>, work: (client: Client) => Promise<T>): Promise<T> {
    const kept = this.take(key);
    if (kept) {
      try {
        return await this.use(key, kept, work);
      } catch (err) {
        if (!sessionUnknown(err)) throw err;
      }
    }
    const ends = new AbortController();
    let client: Client;
    try {
      client = await open(ends.signal);
    } catch (err) {
      ends.abort();
      throw err;
    }
    return this.use(key, { client, close: () => void client.close().catch(() => undefined).finally(() => ends.abort()) }, work);
  }

  /** Idle sessions now, for tests and the bench. */
  idleCount(): number {
    let count = 0;
    for (const sessions of this.idle.values()) count += sessions.length;
    return count;
  }

  closeAll(): void {
    for (const sessions of this.idle.values()) for (const session of sessions) this.discard(session);
    this.idle.clear();
  }

  private async use<T>(key: string, session: Session, work: (client: Client) => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await work(session.client);
    } catch (err) {
      this.discard(session);
      throw err;
    }
    this.keep(key, session);
    return result;
  }

  private take(key: string): Session | undefined {
    const sessions = this.idle.get(key);
    const session = sessions?.pop();
    if (sessions && sessions.length === 0) this.idle.delete(key);
    if (session) clearTimeout(session.timer);
    return session;
  }

  private keep(key: string, session: Session): void {
    const sessions = this.idle.get(key) ?? [];
    if (sessions.length >= this.limits.maxIdlePerKey) return this.discard(session);
    this.idle.delete(key); // re-inserted last: the map's order is the pairs' last use
    this.idle.set(key, [...sessions, session]);
    session.timer = setTimeout(() => this.drop(key, session), this.limits.idleMs).unref();
    // An idle session's stream broke (the upstream restarted or closed it): not worth keeping.
    session.client.onerror = () => this.drop(key, session);
    if (this.idle.size > this.limits.maxKeys) {
      const [oldest, evicted] = this.idle.entries().next().value!;
      this.idle.delete(oldest);
      for (const stale of evicted) this.discard(stale);
    }
  }

  private drop(key: string, session: Session): void {
    const sessions = this.idle.get(key);
    const at = sessions?.indexOf(session) ?? -1;
    if (at < 0) return;
    sessions!.splice(at, 1);
    if (sessions!.length === 0) this.idle.delete(key);
    this.discard(session);
  }

  private discard(session: Session): void {
    clearTimeout(session.timer);
    session.client.onerror = undefined;
    session.close();
  }
}

/** The upstream no longer knows the session (it restarted, or expired it): the request was not run. */
export function sessionUnknown(err: unknown): boolean {
  const status = (err as { data?: { status?: unknown } })?.data?.status;
  return err instanceof Error && err.message.startsWith('Error POSTing to endpoint') && (status === 404 || status === 400);
}
