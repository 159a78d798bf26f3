import { OnApplicationShutdown } from '@nestjs/common';
import type { Broadcast } from '../redis/broadcast';

type RequestId = string | number;

/**
 * MCP `notifications/cancelled` for tools/call requests in flight. Stateless Streamable HTTP
 * delivers the notification in its own POST, possibly to another API process than the one
 * running the call, so a cancel is broadcast and every process aborts its matching calls.
 * A request is known by the API key that sent it and its JSON-RPC id.
 */
export class McpCancellations implements OnApplicationShutdown {
  private readonly inFlight = new Map<string, Set<AbortController>>();

  constructor(private readonly broadcast: Broadcast) {
    broadcast.onMessage((message) => this.abortHere(message));
  }

  /** A signal that fires when the request is cancelled, or on `abort`; call `release` when it ends. */
  track(keyId: string, requestId: RequestId): { signal: AbortSignal; abort: () => void; release: () => void } {
    const name = requestName(keyId, requestId);
    const controller = new AbortController();
    let calls = this.inFlight.get(name);
    if (!calls) this.inFlight.set(name, (calls = new Set()));
    calls.add(controller);
    const release = () => {
      calls!.delete(controller);
      if (calls!.size === 0 && this.inFlight.get(name) === calls) this.inFlight.delete(name);
    };
    return { signal: controller.signal, abort: () => controller.abort(), release };
  }

  cancel(keyId: string, requestId: RequestId): void {
    this.broadcast.announce(requestName(keyId, requestId));
  }

  onApplicationShutdown(): void {
    this.broadcast.close();
  }

  private abortHere(name: string): void {
    for (const controller of this.inFlight.get(name) ?? []) controller.abort();
  }
}

/** JSON keeps the id's type: request 1 and request "1" are different requests. */
function requestName(keyId: string, requestId: RequestId): string {
  return `${keyId} ${JSON.stringify(requestId)}`;
}
