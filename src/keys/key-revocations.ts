import { Logger, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';

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
  private readonly publisher: Redis;
  private readonly subscriber: Redis;

  constructor(url: string, private readonly channel: string) {
    super();
    this.publisher = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    this.subscriber = new Redis(url, { maxRetriesPerRequest: null });
    for (const client of [this.publisher, this.subscriber]) client.on('error', (err) => this.logger.warn(`redis: ${err.message}`));
    void this.subscriber.subscribe(channel).catch((err: Error) => this.logger.error(`cannot subscribe to ${channel}: ${err.message}`));
    this.subscriber.on('message', (_channel, keyId: string) => this.notify(keyId));
  }

  /** This process forgets at once; the others when the message arrives (or when their cache entry expires). */
  announce(keyId: string): void {
    this.notify(keyId);
    this.publisher.publish(this.channel, keyId).catch((err: Error) => {
      this.logger.warn(`revocation of ${keyId} not broadcast (${err.message}); other processes drop it within AUTH_CACHE_TTL_SECONDS`);
    });
  }

  onApplicationShutdown(): void {
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}
