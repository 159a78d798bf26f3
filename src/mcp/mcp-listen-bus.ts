import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import { canUseTool, type Principal } from '../identity/principal';
import type { CatalogueChange } from '../workflows/catalogue-changes';

type Listener = (event: ServerEvent) => void;

/**
 * The change events of 2026-07-28 `subscriptions/listen` streams (docs/mcp.md, "Change subscriptions"),
 * each stream hearing only its own credential's catalogue: the SDK opens a stream's listener while
 * serving that request, inside `as(principal, …)`, so the listener is kept with the principal
 * and a change reaches the streams of its account whose key may use one of the tools it touched.
 */
export class McpListenBus implements ServerEventBus {
  private readonly caller = new AsyncLocalStorage<Principal>();
  private readonly listeners = new Map<Listener, Principal | undefined>();

  /** Serves `work` as `principal`'s request: the streams it opens listen for that principal. */
  as<T>(principal: Principal, work: () => T): T {
    return this.caller.run(principal, work);
  }

  /** Tells the streams of the change's account, whose key sees a tool it touched, that their tool list changed. */
  catalogueChanged({ accountId, toolIds }: CatalogueChange): void {
    for (const [listener, principal] of this.listeners) {
      if (principal?.accountId === accountId && toolIds.some((toolId) => canUseTool(principal, toolId))) listener({ kind: 'tools_list_changed' });
    }
  }

  /** A change of what every account sees (the SDK's own notify): every stream hears it. */
  publish(event: ServerEvent): void {
    for (const listener of this.listeners.keys()) listener(event);
  }

  subscribe(listener: Listener): () => void {
    this.listeners.set(listener, this.caller.getStore());
    return () => void this.listeners.delete(listener);
  }
}
