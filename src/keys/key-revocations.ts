import { Logger, OnApplicationShutdown } from '@nestjs/common';
import { RedisChannel } from '../common/redis';

type Listener = (keyId: string) => void;

/**
 * Tells every process that a key was revoked or rotated, so their verified-key caches drop it at
 * once: within this process only, or over Redis pub/sub to all API processes (and from the CLI).
 */
export abstract class KeyRevocations {
  protected readonly listeners: Listener[] = [];

  abstract announce(keyId: string): void;

  onRevoked(listener: Listener): void {
    this.listeners.push(listener);
  }

  protected notify(keyId: string): void {
    for (const listener of this.listeners) listener(keyId);
  }
}

export class LocalKeyRevocations extends KeyRevocations {
  announce(keyId: string): void {
    this.notify(keyId);
  }
}

export class RedisKeyRevocations extends KeyRevocations implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisKeyRevocations.name);
  private readonly channel: RedisChannel;

  constructor(url: string, channel: string) {
    super();
    this.channel = new RedisChannel(url, channel, (keyId) => this.notify(keyId));
  }

  /** This process forgets at once; the others when the message arrives (or when their cache entry expires). */
  announce(keyId: string): void {
    this.notify(keyId);
    this.channel.publish(keyId).catch((err: Error) => {
      this.logger.warn(`revocation of ${keyId} not broadcast (${err.message}); other processes drop it within AUTH_CACHE_TTL_SECONDS`);
    });
  }

  onApplicationShutdown(): void {
    this.channel.close();
  }
}
