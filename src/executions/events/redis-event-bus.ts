import { Logger, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { ExecutionEvent, ExecutionEventBus } from './execution-events';

/** Every process subscribes to one channel; each keeps only the events it has listeners for. */
export class RedisEventBus extends ExecutionEventBus implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisEventBus.name);
  private readonly publisher: Redis;
  private readonly subscriber: Redis;

  constructor(
    redisUrl: string,
    private readonly channel: string,
  ) {
    super();
    // No offline queue: while Redis is away, publishing fails at once instead of piling up.
    this.publisher = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
    this.subscriber = new Redis(redisUrl, { maxRetriesPerRequest: null });
    for (const client of [this.publisher, this.subscriber]) client.on('error', (err) => this.logger.warn(`redis: ${err.message}`));
    void this.subscriber.subscribe(channel).catch((err: Error) => this.logger.error(`cannot subscribe to ${channel}: ${err.message}`));
    this.subscriber.on('message', (_channel, message: string) => this.deliver(JSON.parse(message) as ExecutionEvent));
  }

  publish(event: ExecutionEvent): void {
    this.publisher.publish(this.channel, JSON.stringify(event)).catch((err: Error) => {
      this.logger.warn(`event for ${event.execution_id} not published: ${err.message}`);
    });
  }

  /** After the drain (beforeApplicationShutdown), so the last statuses still go out. */
  onApplicationShutdown(): void {
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}
