import { Logger, OnApplicationShutdown } from '@nestjs/common';
import { RedisChannel } from '../../../common/redis';
import { ExecutionEvent, ExecutionEventBus } from './execution-events';

/** Every process subscribes to one channel; each keeps only the events it has listeners for. */
export class RedisEventBus extends ExecutionEventBus implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisEventBus.name);
  private readonly channel: RedisChannel;

  constructor(redisUrl: string, channel: string) {
    super();
    this.channel = new RedisChannel(redisUrl, channel, (message) => this.deliver(JSON.parse(message) as ExecutionEvent));
  }

  publish(event: ExecutionEvent): void {
    this.channel.publish(JSON.stringify(event)).catch((err: Error) => {
      this.logger.warn(`event for ${event.execution_id} not published: ${err.message}`);
    });
  }

  /** After the drain (beforeApplicationShutdown), so the last statuses still go out. */
  onApplicationShutdown(): void {
    this.channel.close();
  }
}
