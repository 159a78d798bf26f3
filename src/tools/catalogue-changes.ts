import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Broadcast } from '../redis/broadcast';

/** The `accountId` of a change to what every account sees (an operator-wide upstream, docs/upstreams.md#operator-registered-upstreams). */
export const EVERY_ACCOUNT = '*';

/** A change to an account's own part of the tool catalogue (or to every account's): the tool ids that came, went or changed. */
export interface CatalogueChange {
  /** An account's id, or EVERY_ACCOUNT. */
  accountId: string;
  toolIds: string[];
}

type Listener = (change: CatalogueChange) => void;

/**
 * Tells every API process that an account's catalogue changed (a published workflow or an upstream's tool came, went or
 * was renamed), so MCP `subscriptions/listen` streams held by any of them can send
 * `notifications/tools/list_changed` (docs/mcp.md, "Change subscriptions").
 */
export class CatalogueChanges {
  private readonly logger = new Logger(CatalogueChanges.name);
  private readonly listeners: Listener[] = [];
  /** Ids of the changes told lately: the sender hears its own twice (now, and back from Redis), and tells its listeners once. */
  private readonly told = new Set<string>();

  constructor(private readonly broadcast: Broadcast) {
    broadcast.onMessage((message) => {
      const change = parseChange(message);
      if (!change) return void this.logger.warn('A catalogue change that is not one was ignored');
      if (this.told.has(change.id)) return;
      if (this.told.size >= 1_000) this.told.clear();
      this.told.add(change.id);
      for (const listener of this.listeners) listener({ accountId: change.accountId, toolIds: change.toolIds });
    });
  }

  announce(change: CatalogueChange): void {
    if (change.toolIds.length > 0) this.broadcast.announce(JSON.stringify({ id: randomUUID(), ...change }));
  }

  onChange(listener: Listener): void {
    this.listeners.push(listener);
  }
}

function parseChange(message: string): (CatalogueChange & { id: string }) | undefined {
  try {
    const { id, accountId, toolIds } = JSON.parse(message) as Partial<CatalogueChange & { id: string }>;
    if (typeof id !== 'string' || typeof accountId !== 'string' || !Array.isArray(toolIds) || !toolIds.every((toolId) => typeof toolId === 'string')) return undefined;
    return { id, accountId, toolIds };
  } catch {
    return undefined;
  }
}
