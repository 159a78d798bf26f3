import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import type { LiveListener, LiveUpdates } from '../executions/live/live-updates';
import { canUseTool, type Principal } from '../identity/principal';
import { EVERY_ACCOUNT, type CatalogueChange } from '../tools/catalogue-changes';
import { executionIdOfUri, executionUri } from './mcp-execution-uri';

type Listener = (event: ServerEvent) => void;

/** The stream a `subscriptions/listen` request opens: whose it is, and which executions it asked to follow. */
interface Stream {
  principal: Principal;
  followed: ReadonlySet<string>;
}

/**
 * The change events of 2026-07-28 `subscriptions/listen` streams (docs/mcp.md, "Change subscriptions"),
 * each stream hearing only its own credential's changes: the SDK opens a stream's listener while
 * serving that request, inside `as(principal, …)`, so the listener is kept with the principal.
 * A catalogue change reaches the streams of its account whose key may use one of the tools it
 * touched; a stream that follows executions (`resourceSubscriptions` of `tos://executions/…`) is
 * a LiveUpdates listener like a WebSocket, offered only the executions its key may see, and the
 * SDK passes on the updates of the URIs the stream named.
 */
export class McpListenBus implements ServerEventBus {
  private readonly caller = new AsyncLocalStorage<Stream>();
  private readonly listeners = new Map<Listener, Principal | undefined>();

  constructor(private readonly live: LiveUpdates) {}

  /** Serves `work` as `principal`'s request: a stream it opens listens for that principal, following the executions among `resourceUris`. */
  as<T>(principal: Principal, resourceUris: readonly unknown[], work: () => T): T {
    const followed = new Set(resourceUris.map(executionIdOfUri).filter((id): id is string => id !== undefined));
    return this.caller.run({ principal, followed }, work);
  }

  /** Tells the streams of the change's account, whose key sees a tool it touched, that their tool list changed. */
  catalogueChanged({ accountId, toolIds }: CatalogueChange): void {
    for (const [listener, principal] of this.listeners) {
      if (principal && (principal.accountId === accountId || accountId === EVERY_ACCOUNT) && toolIds.some((toolId) => canUseTool(principal, toolId))) listener({ kind: 'tools_list_changed' });
    }
  }

  /** A change of what every account sees (the SDK's own notify): every stream hears it. */
  publish(event: ServerEvent): void {
    for (const listener of this.listeners.keys()) listener(event);
  }

  subscribe(listener: Listener): () => void {
    const stream = this.caller.getStore();
    this.listeners.set(listener, stream?.principal);
    const following = stream && stream.followed.size > 0 ? this.follow(stream, listener) : undefined;
    return () => {
      this.listeners.delete(listener);
      if (following) this.live.detach(following);
    };
  }

  private follow({ principal, followed }: Stream, listener: Listener): LiveListener | undefined {
    const following: LiveListener = {
      principal,
      offer: ({ data }) => {
        const id = data.execution_id as string;
        if (followed.has(id)) listener({ kind: 'resource_updated', uri: executionUri(id) });
      },
      // A revoked key: its stream hears nothing more (the SDK ends the stream when the client goes).
      close: () => this.live.detach(following),
    };
    // Refused when the key already holds its share of live connections: the stream then only acknowledges.
    return this.live.attach(following) ? following : undefined;
  }
}
