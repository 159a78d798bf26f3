import { Logger } from '@nestjs/common';
import Redis from 'ioredis';

const logger = new Logger('Redis');

/**
 * ioredis's retryStrategy: reconnect within half a second of Redis coming back. The defaults back
 * off much further (Bull's: e^attempt ms up to 20 s, so 8 s after a 5 s outage; ioredis's: 2 s),
 * and every request needing the queue answers 503 meanwhile; a refused connect costs nothing.
 */
export const reconnectPromptly = (attempt: number): number => Math.min(attempt * 50, 500);

/**
 * A client for request-path commands: no offline queue and one retry, so while Redis is away a
 * command fails at once and the caller falls back, instead of requests piling up behind it.
 * Commands issued in the same event-loop turn (many requests' worth under load) go out in one
 * write, which saves a syscall per command on both ends.
 */
export function failFastRedis(url: string): Redis {
  const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, enableAutoPipelining: true, retryStrategy: reconnectPromptly });
  client.on('error', () => undefined); // each caller reports failures where it handles them
  return client;
}

/**
 * What a Redis restart would lose of the queue, from its own settings; null when it keeps every
 * write (appendonly yes). Queued executions live only in Redis until a worker takes them.
 */
export async function persistenceWarning(url: string): Promise<string | null> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined); // connect() and config() report it
  try {
    await client.connect();
    const [[, appendonly], [, save]] = (await Promise.all([client.config('GET', 'appendonly'), client.config('GET', 'save')])) as [string, string][];
    if (appendonly === 'yes') return null;
    const fix = 'set appendonly yes (README: Running API and worker processes)';
    return save
      ? `Redis persists by snapshot only (save "${save}", appendonly no): a crash loses what was queued since the last snapshot; ${fix}`
      : `Redis has no persistence (appendonly no, save ""): a restart loses every queued execution; ${fix}`;
  } finally {
    client.disconnect();
  }
}

/** A Lua script as a function of its keys, then its arguments (sent as EVALSHA, loaded on first use). */
export function redisScript<T>(client: Redis, name: string, numberOfKeys: number, lua: string): (...keysAndArgs: (string | number)[]) => Promise<T> {
  client.defineCommand(name, { numberOfKeys, lua });
  const command = (client as unknown as Record<string, (...keysAndArgs: (string | number)[]) => Promise<T>>)[name];
  return (...keysAndArgs) => command.call(client, ...keysAndArgs);
}

/** One pub/sub channel: every process that opens it receives every message, its own included. */
export class RedisChannel {
  private readonly publisher: Redis;
  private readonly subscriber: Redis;

  constructor(url: string, readonly name: string, onMessage: (message: string) => void) {
    this.publisher = failFastRedis(url);
    this.subscriber = new Redis(url, { maxRetriesPerRequest: null, retryStrategy: reconnectPromptly });
    this.subscriber.on('error', (err) => logger.warn(`${name}: ${err.message}`));
    this.subscriber.on('message', (_channel, message: string) => onMessage(message));
    void this.subscriber.subscribe(name).catch((err: Error) => logger.error(`cannot subscribe to ${name}: ${err.message}`));
  }

  async publish(message: string): Promise<void> {
    await this.publisher.publish(this.name, message);
  }

  close(): void {
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}
