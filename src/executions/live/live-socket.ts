import type { WebSocket } from 'ws';
import { AppException } from '../../common/errors';
import type { Principal } from '../../identity/principal';
import type { Verification } from '../../auth/key-verifier';
import { LRUCache } from 'lru-cache';
import { LiveEvent } from './live-events';
import { CLOSE, ClientMessage, LIMITS, parseClientMessage, subscriptionName, Target, targetOf } from './live-protocol';
import { LiveListener, LiveUpdates } from './live-updates';

export interface LiveSocketOptions {
  /** Verifies a key sent in an `auth` message. */
  verify(key: string): Promise<Verification>;
  /** Closed after this long without a message or pong from the client; pinged three times as often. */
  idleTimeoutMs: number;
  /** `?after=` of the upgrade request: the resume point of every subscription that names none. */
  after?: number;
}

/** The visible state each socket last sent per execution, so a state is never sent twice. */
const REMEMBERED_STATES = 1_000;
const ENDED = 'ended';
/** A closing handshake the client does not finish within this long is cut (it would hold a shutdown open). */
const CLOSE_GRACE_MS = 1_000;

/**
 * One client of GET /v1/ws (docs/executions.md#live-updates-over-websocket): authenticated by its
 * upgrade request's key, or by a first `auth` message within AUTH_TIMEOUT_MS; then subscribe and
 * unsubscribe messages, events numbered with `seq`. A bad message is answered with an error, never
 * acted on.
 */
export class LiveSocket implements LiveListener {
  private authenticated: Principal | null = null;
  private readonly subscriptions = new Map<string, Target>();
  /** Subscriptions whose initial state is being read, with the events that came meanwhile. */
  private readonly pending = new Map<string, LiveEvent[]>();
  private readonly sent = new LRUCache<string, string>({ max: REMEMBERED_STATES });
  private lastHeard = Date.now();
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly ws: WebSocket,
    private readonly hub: LiveUpdates,
    private readonly options: LiveSocketOptions,
    principal: Principal | null,
  ) {
    ws.on('message', (data, isBinary) => {
      this.lastHeard = Date.now();
      if (isBinary) return this.error('INVALID_MESSAGE', 'binary frames are not part of the protocol: send JSON text');
      // A failure behind a message (the database away) answers it; it never reaches the process.
      this.receive(data.toString()).catch(() => this.error('INTERNAL_ERROR', 'the message could not be handled now: send it again'));
    });
    ws.on('pong', () => (this.lastHeard = Date.now()));
    ws.on('close', () => this.stop());
    ws.on('error', () => this.stop());
    this.timers.push(setInterval(() => this.keepAlive(), Math.max(100, Math.floor(options.idleTimeoutMs / 3))));
    if (principal) this.begin(principal);
    else this.timers.push(setTimeout(() => this.closeUnlessAuthenticated(), LIMITS.AUTH_TIMEOUT_MS));
  }

  get principal(): Principal {
    if (!this.authenticated) throw new Error('LiveSocket.principal read before authentication');
    return this.authenticated;
  }

  offer(event: LiveEvent): void {
    // A key that expires (or passes its rotation's grace) while its socket is open stops there.
    const { expiresAt, revokedAt } = this.principal;
    const ends = Math.min(expiresAt?.getTime() ?? Infinity, revokedAt?.getTime() ?? Infinity);
    if (ends <= Date.now()) return this.close(CLOSE.unauthorized, 'API key expired or revoked');
    const executionId = event.data.execution_id as string;
    const subscription = this.matching(executionId, event.owner.tool_id);
    if (!subscription) return;
    const waiting = this.pending.get(subscription);
    if (waiting) waiting.push(event);
    else this.sendEvent(event, subscription);
  }

  close(code: number, reason: string): void {
    this.ws.close(code, reason);
    setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS).unref();
    this.stop();
  }

  private closeUnlessAuthenticated(): void {
    if (!this.authenticated) this.close(CLOSE.unauthorized, 'no auth message in time');
  }

  private begin(principal: Principal): void {
    if (!principal.scopes.has('executions:read')) return this.close(CLOSE.forbidden, 'the key lacks the executions:read scope');
    this.authenticated = principal;
    if (!this.hub.attach(this)) {
      this.authenticated = null;
      return this.close(CLOSE.tooManySockets, `this key already holds ${LIMITS.MAX_SOCKETS_PER_KEY} sockets`);
    }
    this.send({ type: 'ready', account_id: principal.accountId, key_id: principal.keyId, seq: this.hub.nextSeq(), limits: { subscriptions: LIMITS.SUBSCRIPTIONS_PER_SOCKET, message_bytes: LIMITS.MAX_MESSAGE_BYTES } });
  }

  private async receive(text: string): Promise<void> {
    const parsed = parseClientMessage(text);
    if (!parsed.ok) return this.error('INVALID_MESSAGE', parsed.error);
    const message = parsed.message;
    if (message.type === 'ping') return this.send({ type: 'pong' });
    if (message.type === 'auth') return this.authenticate(message.key);
    if (!this.authenticated) return this.error('UNAUTHORIZED', 'send { "type": "auth", "key": "<API key>" } first');
    try {
      if (message.type === 'subscribe') await this.subscribe(message);
      else this.unsubscribe(message);
    } catch (err) {
      if (!(err instanceof AppException)) throw err;
      this.error(err.code, err.message, subscriptionNameOf(message));
    }
  }

  private async authenticate(key: string): Promise<void> {
    if (this.authenticated) return this.error('INVALID_MESSAGE', 'already authenticated');
    const verification = await this.options.verify(key);
    if (!verification.ok) return this.close(CLOSE.unauthorized, `API key ${verification.reason}`);
    this.begin(verification.principal);
  }

  private async subscribe(message: Extract<ClientMessage, { type: 'subscribe' }>): Promise<void> {
    const target = targetOf(message);
    if (!target) return this.error('INVALID_MESSAGE', 'name exactly one of execution_id, tool_id or all: true');
    const name = subscriptionName(target);
    if (!this.subscriptions.has(name) && this.subscriptions.size + this.pending.size >= LIMITS.SUBSCRIPTIONS_PER_SOCKET) {
      return this.error('LIMIT_EXCEEDED', `at most ${LIMITS.SUBSCRIPTIONS_PER_SOCKET} subscriptions per socket`, name);
    }
    if ('tool_id' in target && this.principal.toolIds && !this.principal.toolIds.has(target.tool_id)) {
      return this.error('FORBIDDEN', `this key may not use tool '${target.tool_id}'`, name);
    }
    // Events that arrive while the initial state is read wait for it, so none falls in between.
    const waiting: LiveEvent[] = [];
    this.pending.set(name, waiting);
    try {
      const initial = await this.hub.initialEvents(this.principal, target, message.after ?? this.options.after);
      this.subscriptions.set(name, target);
      this.send({ type: 'subscribed', subscription: name });
      for (const event of [...initial, ...waiting]) this.sendEvent(event, name);
    } finally {
      this.pending.delete(name);
    }
  }

  private unsubscribe(message: Extract<ClientMessage, { type: 'unsubscribe' }>): void {
    const target = targetOf(message);
    if (!target) return this.error('INVALID_MESSAGE', 'name exactly one of execution_id, tool_id or all: true');
    const name = subscriptionName(target);
    if (!this.subscriptions.delete(name)) return this.error('NOT_FOUND', `no subscription ${name}`, name);
    this.send({ type: 'unsubscribed', subscription: name });
  }

  /** The subscription an event of this execution arrives under: its own, its tool's, or the account's. */
  private matching(executionId: string, toolId: string): string | null {
    for (const name of [`execution:${executionId}`, `tool:${toolId}`, 'all']) if (this.subscriptions.has(name) || this.pending.has(name)) return name;
    return null;
  }

  /**
   * A status event is read back from the row, which may already be past it (a fast execution's
   * `queued` reads as its end): after an execution's end, its late events are dropped.
   */
  private sendEvent(event: LiveEvent, subscription: string): void {
    const executionId = event.data.execution_id as string;
    const previous = this.sent.get(executionId);
    if (previous === ENDED || (previous === event.state && !event.final && event.event !== 'execution.progress')) return;
    this.sent.set(executionId, event.final ? ENDED : event.state);
    this.send({ type: 'event', seq: this.hub.nextSeq(), subscription, event: event.event, timestamp: new Date().toISOString(), data: event.data });
  }

  private keepAlive(): void {
    if (Date.now() - this.lastHeard > this.options.idleTimeoutMs) return this.close(CLOSE.idle, 'idle');
    if (this.ws.readyState === this.ws.OPEN) this.ws.ping();
  }

  private error(code: string, message: string, subscription?: string): void {
    this.send({ type: 'error', code, message, ...(subscription && { subscription }) });
  }

  private send(message: Record<string, unknown>): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(message));
  }

  private stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.length = 0;
    if (this.authenticated) this.hub.detach(this);
  }
}

function subscriptionNameOf(message: { execution_id?: string; tool_id?: string; all?: true }): string | undefined {
  const target = targetOf(message);
  return target ? subscriptionName(target) : undefined;
}
