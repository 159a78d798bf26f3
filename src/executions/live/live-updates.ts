import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { canUseTool, type Principal } from '../../identity/principal';
import { KeyRevocations } from '../../keys/key-revocations';
import { ExecutionEvent, ExecutionEventBus } from '../engine/events/execution-events';
import { ExecutionsStore } from '../engine/executions.store';
import { ExecutionOwner, LiveEvent, progressEvent, stateEvent } from './live-events';
import { CLOSE, LIMITS, Target } from './live-protocol';

/** One connected socket as the hub sees it. */
export interface LiveListener {
  readonly principal: Principal;
  /** Offered every visible event; the listener checks its own subscriptions. */
  offer(event: LiveEvent): void;
  /** Closes the socket (shutdown, or its key revoked). */
  close(code: number, reason: string): void;
}

/** A resumed subscription replays state changed since this long before the `after` it was given: clocks of replicas differ. */
const RESUME_SLACK_MS = 2_000;

/**
 * The live side of GET /v1/ws in one API process: every execution event from the bus (in-process,
 * or Redis pub/sub from any process) turned into a LiveEvent and offered to the sockets allowed to
 * see it. Events of one execution are handled in order; a status event is read back from its row,
 * so what a socket gets is the execution's state, as the SSE stream does.
 */
@Injectable()
export class LiveUpdates implements BeforeApplicationShutdown {
  private readonly logger = new Logger(LiveUpdates.name);
  private readonly listeners = new Set<LiveListener>();
  private readonly socketsByKey = new Map<string, number>();
  private readonly owners = new LRUCache<string, ExecutionOwner>({ max: 10_000 });
  /** The tail of each execution's event handling, so its events go out in the order they came. */
  private readonly tails = new Map<string, Promise<void>>();
  private stopListening: (() => void) | null = null;
  private lastSeq = 0;

  constructor(
    private readonly bus: ExecutionEventBus,
    private readonly store: ExecutionsStore,
    revocations: KeyRevocations,
  ) {
    revocations.onRevoked((keyId) => {
      for (const listener of this.listeners) if (listener.principal.keyId === keyId) listener.close(CLOSE.unauthorized, 'API key revoked');
    });
  }

  /**
   * Sequence numbers: microseconds since the epoch, strictly increasing in this process, so a
   * number seen on one replica says when, for a resume on another (docs/executions.md#resuming).
   */
  nextSeq(): number {
    this.lastSeq = Math.max(this.lastSeq + 1, Date.now() * 1000);
    return this.lastSeq;
  }

  /** Whether the key holds fewer than MAX_SOCKETS_PER_KEY listeners here. */
  hasRoom(keyId: string): boolean {
    return (this.socketsByKey.get(keyId) ?? 0) < LIMITS.MAX_SOCKETS_PER_KEY;
  }

  /** Adds a listener (a socket, an MCP stream following executions); false when its key already holds MAX_SOCKETS_PER_KEY here. */
  attach(listener: LiveListener): boolean {
    if (!this.hasRoom(listener.principal.keyId)) return false;
    this.socketsByKey.set(listener.principal.keyId, (this.socketsByKey.get(listener.principal.keyId) ?? 0) + 1);
    this.listeners.add(listener);
    this.stopListening ??= this.bus.subscribeAll((event) => this.enqueue(event));
    return true;
  }

  detach(listener: LiveListener): void {
    if (!this.listeners.delete(listener)) return;
    const held = (this.socketsByKey.get(listener.principal.keyId) ?? 1) - 1;
    if (held === 0) this.socketsByKey.delete(listener.principal.keyId);
    else this.socketsByKey.set(listener.principal.keyId, held);
    if (this.listeners.size === 0) {
      this.stopListening?.();
      this.stopListening = null;
    }
  }

  /** Whether the principal may see an execution of this owner: its account, a tool its key may use. */
  static visible(principal: Principal, owner: ExecutionOwner): boolean {
    return owner.account_id === principal.accountId && canUseTool(principal, owner.tool_id);
  }

  /**
   * What a new subscription starts with: for one execution its current state (unless it ended
   * before `after`); for a tool or the account, with `after`, the state of each execution still
   * active or ended since (newest RESUME_LIMIT), oldest first. Throws NOT_FOUND for an execution the principal cannot see.
   */
  async initialEvents(principal: Principal, target: Target, after: number | undefined): Promise<LiveEvent[]> {
    const since = after === undefined ? undefined : new Date(Math.floor(after / 1000) - RESUME_SLACK_MS);
    if ('execution_id' in target) {
      const execution = await this.store.get(principal, target.execution_id);
      const endedBefore = since && execution.completed_at && execution.completed_at < since;
      return endedBefore ? [] : [stateEvent(execution)];
    }
    if (!since) return [];
    const changed = await this.store.changedSince(principal, 'tool_id' in target ? target.tool_id : undefined, since, LIMITS.RESUME_LIMIT);
    return changed.reverse().map((execution) => stateEvent(execution));
  }

  private enqueue(event: ExecutionEvent): void {
    const id = event.execution_id;
    const tail = (this.tails.get(id) ?? Promise.resolve()).then(() => this.dispatch(event));
    this.tails.set(id, tail);
    void tail.finally(() => {
      if (this.tails.get(id) === tail) this.tails.delete(id);
    });
  }

  private async dispatch(event: ExecutionEvent): Promise<void> {
    let live: LiveEvent | null;
    try {
      live = await this.describe(event);
    } catch (err) {
      this.logger.warn(`live event of ${event.execution_id} dropped: ${(err as Error).message}`);
      return;
    }
    if (live) for (const listener of this.listeners) if (LiveUpdates.visible(listener.principal, live.owner)) listener.offer(live);
  }

  /** A status event becomes the row's state (its result, its questions); progress needs only the owner. */
  private async describe(event: ExecutionEvent): Promise<LiveEvent | null> {
    const known = event.type === 'progress' ? this.owners.get(event.execution_id) : undefined;
    if (known && event.type === 'progress') return progressEvent(known, event.execution_id, event.progress, event.message);
    const execution = await this.store.find(event.execution_id);
    if (!execution) return null;
    const owner = { account_id: execution.account_id, tool_id: execution.tool_id };
    this.owners.set(execution.id, owner);
    return event.type === 'progress' ? progressEvent(owner, execution.id, event.progress, event.message) : stateEvent(execution);
  }

  /** Before the HTTP server closes: an open socket would hold its close open. Clients reconnect elsewhere and resume. */
  beforeApplicationShutdown(): void {
    this.closeAll();
  }

  closeAll(): void {
    for (const listener of [...this.listeners]) listener.close(CLOSE.goingAway, 'server shutting down');
  }
}
