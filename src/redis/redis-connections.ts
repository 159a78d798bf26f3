import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import Redis, { type RedisOptions } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppConfig } from '../config/app-config';

const logger = new Logger('Redis');
/** The longest a connection's QUIT is waited for at shutdown. */
const QUIT_WAIT_MS = 500;

/**
 * ioredis's retryStrategy: reconnect within half a second of Redis coming back. The defaults back
 * off much further (Bull's: e^attempt ms up to 20 s, so 8 s after a 5 s outage; ioredis's: 2 s),
 * and every request needing the queue answers 503 meanwhile; a refused connect costs nothing.
 */
export const reconnectPromptly = (attempt: number): number => Math.min(attempt * 50, 500);

type Listener = (message: string) => void;

/**
 * Every Redis connection of the process (REDIS_URL), opened here and closed here at shutdown.
 * Global, so its shutdown hook runs after every feature module's: the queue's close and the last
 * published statuses (after the drain) still have their connections.
 *
 * - `commands`: one client for request-path commands (limits, quotas, the result cache,
 *   readiness, publishing). No offline queue and one retry, so while Redis is away a command
 *   fails at once and the caller falls back, instead of requests piling up behind it. Commands
 *   issued in the same event-loop turn go out in one write (auto-pipelining).
 * - one subscriber for every pub/sub channel (a subscribed connection runs nothing else);
 * - `open(name, options)` for a client that needs its own connection (Bull's three).
 */
@Injectable()
export class RedisConnections implements OnModuleInit, OnApplicationShutdown {
  private readonly opened = new Set<Redis>();
  private readonly listeners = new Map<string, Set<Listener>>();
  private commandClient?: Redis;
  private subscriber?: Redis;

  constructor(private readonly config: AppConfig) {}

  /**
   * Connects the commands client at start-up: with no offline queue, a command sent before it is
   * up fails, and a process's first publish (a CLI revocation) must not.
   */
  onModuleInit(): void {
    if (this.enabled) this.commandClient ??= this.openCommands();
  }

  /** Whether REDIS_URL is set: shared limits, cache, queue and events; else everything stays in this process. */
  get enabled(): boolean {
    return !!this.config.REDIS_URL;
  }

  /** A key or channel name in this deployment's namespace (QUEUE_PREFIX). */
  name(suffix: string): string {
    return `${this.config.QUEUE_PREFIX}:${suffix}`;
  }

  get commands(): Redis {
    return (this.commandClient ??= this.openCommands());
  }

  /** A client of its own, closed with the others at shutdown. */
  open(name: string, options: RedisOptions): Redis {
    if (!this.config.REDIS_URL) throw new Error(`Redis connection '${name}' wanted without REDIS_URL`);
    const client = new Redis(this.config.REDIS_URL, { connectionName: `tos:${name}`, ...options });
    // Kept until shutdown even when it ends: Bull ends its blocking client and connects it again.
    this.opened.add(client);
    return client;
  }

  /** Every process that subscribes to `channel` receives every message, its own included; answers the unsubscription. */
  subscribe(channel: string, onMessage: Listener): () => void {
    let listeners = this.listeners.get(channel);
    if (!listeners) {
      this.listeners.set(channel, (listeners = new Set()));
      void this.subscriberClient()
        .subscribe(channel)
        .catch((err: Error) => logger.error(`cannot subscribe to ${channel}: ${err.message}`));
    }
    listeners.add(onMessage);
    return () => listeners.delete(onMessage);
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.commands.publish(channel, message);
  }

  /** Connections not ended (tests: none is left after shutdown). */
  get openCount(): number {
    return [...this.opened].filter((client) => client.status !== 'end').length;
  }

  /**
   * What a Redis restart would lose of the queue, from its own settings; null when it keeps every
   * write (appendonly yes). Queued executions live only in Redis until a worker takes them.
   */
  async persistenceWarning(): Promise<string | null> {
    const client = this.open('persistence-check', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
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
      this.opened.delete(client);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.opened].map(closeGracefully));
    this.opened.clear();
  }

  private openCommands(): Redis {
    const client = this.open('commands', { enableOfflineQueue: false, maxRetriesPerRequest: 1, enableAutoPipelining: true, retryStrategy: reconnectPromptly });
    client.on('error', () => undefined); // each caller reports failures where it handles them
    return client;
  }

  private subscriberClient(): Redis {
    if (!this.subscriber) {
      const subscriber = this.open('subscriber', { maxRetriesPerRequest: null, retryStrategy: reconnectPromptly });
      subscriber.on('error', (err) => logger.warn(`subscriber: ${err.message}`));
      subscriber.on('message', (channel: string, message: string) => {
        for (const listener of this.listeners.get(channel) ?? []) listener(message);
      });
      this.subscriber = subscriber;
    }
    return this.subscriber;
  }
}

/**
 * QUIT lets the commands already sent get their replies (the queue's last ones among them, which
 * Bull would otherwise see fail); a connection that is not up, or a QUIT that takes over half a
 * second (a blocked command), is dropped.
 */
async function closeGracefully(client: Redis): Promise<void> {
  if (client.status === 'ready') await Promise.race([client.quit().catch(() => undefined), sleep(QUIT_WAIT_MS, undefined, { ref: false })]);
  client.disconnect();
}

/** A Lua script as a function of its keys, then its arguments (sent as EVALSHA, loaded on first use). */
export function redisScript<T>(client: Redis, name: string, numberOfKeys: number, lua: string): (...keysAndArgs: (string | number)[]) => Promise<T> {
  client.defineCommand(name, { numberOfKeys, lua });
  const command = (client as unknown as Record<string, (...keysAndArgs: (string | number)[]) => Promise<T>>)[name];
  return (...keysAndArgs) => command.call(client, ...keysAndArgs);
}
