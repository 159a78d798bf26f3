import { Logger, OnApplicationShutdown } from '@nestjs/common';
import { RedisConnections } from '../../../redis/redis-connections';
import { ExecutionEvent, ExecutionEventBus } from './execution-events';

/** Every process subscribes to one channel; each keeps only the events it has listeners for. */
export class RedisEventBus extends ExecutionEventBus implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisEventBus.name);
  private readonly channel: string;
  private readonly unsubscribe: () => void;

  constructor(private readonly redis: RedisConnections) {
    super();
    this.channel = redis.name('execution-events');
    this.unsubscribe = redis.subscribe(this.channel, (message) => this.deliver(JSON.parse(message) as ExecutionEvent));
  }

  publish(event: ExecutionEvent): void {
    this.redis.publish(this.channel, JSON.stringify(event)).catch((err: Error) => {
      this.logger.warn(`event for ${event.execution_id} not published: ${err.message}`);
    });
  }

  /** After the drain (beforeApplicationShutdown), so the last statuses still go out. */
  onApplicationShutdown(): void {
    this.unsubscribe();
  }
}
