import { Logger } from '@nestjs/common';
import type { Broadcast } from '../redis/broadcast';

/** A change to an account's own part of the tool catalogue: the tool ids that came, went or changed. */
export interface CatalogueChange {
  accountId: string;
  toolIds: string[];
}

type Listener = (change: CatalogueChange) => void;

/**
 * Tells every API process that an account's catalogue changed (a published workflow came, went or
 * was renamed), so MCP `subscriptions/listen` streams held by any of them can send
 * `notifications/tools/list_changed` (docs/mcp.md, "Change subscriptions").
 */
export class CatalogueChanges {
  private readonly logger = new Logger(CatalogueChanges.name);
  private readonly listeners: Listener[] = [];

  constructor(private readonly broadcast: Broadcast) {
    broadcast.onMessage((message) => {
      const change = parseChange(message);
      if (!change) return void this.logger.warn('A catalogue change that is not one was ignored');
      for (const listener of this.listeners) listener(change);
    });
  }

  announce(change: CatalogueChange): void {
    if (change.toolIds.length > 0) this.broadcast.announce(JSON.stringify(change));
  }

  onChange(listener: Listener): void {
    this.listeners.push(listener);
  }
}

function parseChange(message: string): CatalogueChange | undefined {
  try {
    const { accountId, toolIds } = JSON.parse(message) as Partial<CatalogueChange>;
    if (typeof accountId !== 'string' || !Array.isArray(toolIds) || !toolIds.every((id) => typeof id === 'string')) return undefined;
    return { accountId, toolIds };
  } catch {
    return undefined;
  }
}
