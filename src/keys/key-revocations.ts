import { OnApplicationShutdown } from '@nestjs/common';
import type { Broadcast } from '../redis/broadcast';

/**
 * Tells every process that a key was revoked or rotated, so their verified-key caches drop it at
 * once (the CLI's announcements included). Should Redis miss one, the other processes drop the
 * key within AUTH_CACHE_TTL_SECONDS.
 */
export class KeyRevocations implements OnApplicationShutdown {
  constructor(private readonly broadcast: Broadcast) {}

  announce(keyId: string): void {
    this.broadcast.announce(keyId);
  }

  onRevoked(listener: (keyId: string) => void): void {
    this.broadcast.onMessage(listener);
  }

  onApplicationShutdown(): void {
    this.broadcast.close();
  }
}
