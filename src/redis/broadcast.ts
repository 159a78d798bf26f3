import { Logger } from '@nestjs/common';
import { RedisConnections } from './redis-connections';

type Listener = (message: string) => void;

/**
 * A message for every process of the service: within this process only (embedded mode), or over
 * Redis pub/sub to all of them. The sender's own listeners hear it at once, whatever Redis does;
 * listeners must be idempotent.
 */
export abstract class Broadcast {
  private readonly listeners: Listener[] = [];

  constructor(readonly name: string) {}

  /** Tells this process's listeners now and, when distributed, every other process. */
  abstract announce(message: string): void;

  abstract close(): void;

  onMessage(listener: Listener): void {
    this.listeners.push(listener);
  }

  protected deliver(message: string): void {
    for (const listener of this.listeners) listener(message);
  }
}

export class LocalBroadcast extends Broadcast {
  announce(message: string): void {
    this.deliver(message);
  }

  close(): void {}
}

class RedisBroadcast extends Broadcast {
  private readonly logger = new Logger(RedisBroadcast.name);
  private readonly unsubscribe: () => void;

  constructor(private readonly redis: RedisConnections, name: string) {
    super(name);
    // The sender hears its own message twice (now, and back from Redis): listeners are idempotent.
    this.unsubscribe = redis.subscribe(name, (message) => this.deliver(message));
  }

  announce(message: string): void {
    this.deliver(message);
    this.redis.publish(this.name, message).catch((err: Error) => {
      this.logger.warn(`${this.name}: not broadcast to other processes (${err.message})`);
    });
  }

  close(): void {
    this.unsubscribe();
  }
}

/** The broadcast on `channel` (in QUEUE_PREFIX's namespace): over Redis when it is configured, else this process only. */
export function openBroadcast(redis: RedisConnections, channel: string): Broadcast {
  const name = redis.name(channel);
  return redis.enabled ? new RedisBroadcast(redis, name) : new LocalBroadcast(name);
}
