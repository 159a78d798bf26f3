import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolError } from '../tools/sdk';
import { AppConfig } from '../config/app-config';
import { SERVICE_VERSION } from '../common/service-version';
import { StderrLog } from '../common/stderr-log';
import type { StdioProcess } from './stdio-launch';
import { removeContainer, removeLeftovers, type ContainerSettings } from './stdio-container';

/** How long a process may take from spawn to the end of initialize. */
const START_TIMEOUT_MS = 30_000;
/** The first restart after a crash waits this long, doubling per crash in a row up to BACKOFF_MAX_MS. */
const BACKOFF_BASE_MS = 1_000;
const BACKOFF_MAX_MS = 60_000;
/** A process that ran this long before it ended starts the backoff over. */
const STABLE_MS = 60_000;
/** Calls waiting for a slot beyond the concurrency limit; more are refused as busy (retryable). */
const MAX_WAITING = 100;

export interface StdioLimits {
  concurrency: number;
  idleMs: number;
}

/** What a server is started with: its process, and the secret values put in its environment (never logged). */
export interface StdioStart {
  process: StdioProcess;
  secretValues: string[];
}

interface Running {
  client: Client;
  transport: StdioClientTransport;
  container?: StdioProcess['container'];
  startedAt: number;
  /** Stopped on purpose (idle, delete, shutdown): its end is not a crash. */
  stopping: boolean;
}

/** Waits `ms`, or rejects as soon as `signal` aborts. */
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

/** `promise`, or the signal's reason as soon as it aborts (the promise runs on for others waiting on it). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/**
 * One stdio upstream's process in this service process: started when a call needs it, restarted
 * after a crash when next needed but not before its backoff, at most `concurrency` calls at once
 * (the rest queue), stopped after `idleMs` unused and at shutdown.
 */
class SupervisedServer {
  private running?: Running;
  private starting?: Promise<Running>;
  private crashesInARow = 0;
  private notBefore = 0;
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private idleTimer?: NodeJS.Timeout;
  /** Aborted by close(): a start waiting out its backoff gives up at once rather than hold up shutdown. */
  private readonly closing = new AbortController();
  private readonly stderr: StderrLog;

  constructor(
    private readonly name: string,
    private readonly start: () => Promise<StdioStart>,
    private readonly limits: StdioLimits,
    private readonly logger: Logger,
    private readonly onToolsChanged: () => void,
  ) {
    this.stderr = new StderrLog(name, logger);
  }

  get pid(): number | null {
    return this.running?.transport.pid ?? null;
  }

  get containerName(): string | null {
    return this.running?.container?.name ?? null;
  }

  async use<T>(signal: AbortSignal, work: (client: Client) => Promise<T>): Promise<T> {
    await this.slot(signal);
    try {
      return await work(await this.client(signal));
    } finally {
      this.release();
    }
  }

  async close(): Promise<void> {
    this.closing.abort(new ToolError(`Upstream '${this.name}' is shutting down`, { retryable: true, details: { upstream: this.name } }));
    clearTimeout(this.idleTimer);
    await this.starting?.catch(() => undefined);
    await this.stop();
  }

  private async slot(signal: AbortSignal): Promise<void> {
    clearTimeout(this.idleTimer);
    if (this.active < this.limits.concurrency) {
      this.active += 1;
      return;
    }
    if (this.waiting.length >= MAX_WAITING) throw new ToolError(`Upstream '${this.name}' is busy: ${this.limits.concurrency} calls run and ${MAX_WAITING} wait`, { retryable: true, details: { upstream: this.name } });
    await new Promise<void>((resolve, reject) => {
      const turn = () => {
        signal.removeEventListener('abort', abort);
        resolve();
      };
      const abort = () => {
        this.waiting.splice(this.waiting.indexOf(turn), 1);
        reject(signal.reason);
      };
      this.waiting.push(turn);
      signal.addEventListener('abort', abort, { once: true });
    });
  }

  /** The slot passes to the next waiting call, else is freed; the last one out starts the idle clock. */
  private release(): void {
    const next = this.waiting.shift();
    if (next) return next();
    this.active -= 1;
    if (this.active === 0 && !this.closing.signal.aborted) this.idleTimer = setTimeout(() => void this.idle(), this.limits.idleMs).unref();
  }

  private async idle(): Promise<void> {
    if (this.active > 0 || !this.running) return;
    this.logger.log(`Stdio upstream '${this.name}' idle for ${Math.round(this.limits.idleMs / 1000)} s: stopping its process`);
    await this.stop();
  }

  private client(signal: AbortSignal): Promise<Client> {
    if (this.closing.signal.aborted) return Promise.reject(this.closing.signal.reason);
    if (this.running) return Promise.resolve(this.running.client);
    this.starting ??= this.spawn().finally(() => (this.starting = undefined));
    return untilAborted(this.starting, signal).then((running) => running.client);
  }

  private async spawn(): Promise<Running> {
    const wait = this.notBefore - Date.now();
    if (wait > 0) await sleep(wait, this.closing.signal);
    const [{ Client }, { StdioClientTransport }, { ToolListChangedNotificationSchema }] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/stdio.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]);
    const { process: launched, secretValues } = await this.start();
    // The SDK gives the child only HOME, LOGNAME, PATH, SHELL, TERM and USER of ours, plus `env`: none of the service's own secrets.
    const transport = new StdioClientTransport({ command: launched.command, args: launched.args, env: launched.env, cwd: launched.cwd, stderr: 'pipe' });
    this.stderr.follow(transport.stderr, secretValues);
    const client = new Client({ name: 'tool-orchestration-service', version: SERVICE_VERSION });
    const running: Running = { client, transport, container: launched.container, startedAt: Date.now(), stopping: false };
    client.onclose = () => this.ended(running);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.onToolsChanged());
    try {
      await client.connect(transport, { timeout: START_TIMEOUT_MS });
    } catch (err) {
      running.stopping = true;
      await client.close().catch(() => undefined);
      if (launched.container) await removeContainer(launched.container.dockerHost, launched.container.name);
      this.crashed(running.startedAt);
      throw new ToolError(`Upstream '${this.name}' could not be started: ${(err as Error).message}`, { retryable: true, details: { upstream: this.name } });
    }
    if (this.closing.signal.aborted) {
      running.stopping = true;
      await client.close().catch(() => undefined);
      throw this.closing.signal.reason;
    }
    this.running = running;
    this.logger.log(`Stdio upstream '${this.name}' started (pid ${transport.pid})`);
    return running;
  }

  private ended(running: Running): void {
    if (this.running === running) this.running = undefined;
    if (running.stopping) return;
    const delay = this.crashed(running.startedAt);
    this.logger.warn(`Stdio upstream '${this.name}' exited unexpectedly; restarted when next needed, not before ${delay / 1000} s`);
  }

  /** Counts a crash and sets when the next start may come; returns that delay. */
  private crashed(startedAt: number): number {
    if (Date.now() - startedAt > STABLE_MS) this.crashesInARow = 0;
    this.crashesInARow += 1;
    const delay = Math.min(BACKOFF_BASE_MS * 2 ** (this.crashesInARow - 1), BACKOFF_MAX_MS);
    this.notBefore = Date.now() + delay;
    return delay;
  }

  private async stop(): Promise<void> {
    const running = this.running;
    if (!running) return;
    running.stopping = true;
    this.running = undefined;
    // Closing ends the child's stdin, then SIGTERM after 2 s, then SIGKILL (the SDK's StdioClientTransport.close).
    await running.client.close().catch(() => undefined);
    // A docker CLI killed before its container ended leaves the container running: remove it by name.
    if (running.container) await removeContainer(running.container.dockerHost, running.container.name);
  }
}

/**
 * The stdio upstreams' processes of this service process (docs/upstreams.md#local-stdio-servers),
 * one per upstream, all stopped when the application closes.
 */
@Injectable()
export class StdioSupervisor implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('StdioUpstreams');
  private readonly servers = new Map<string, SupervisedServer>();
  private readonly limits: StdioLimits;
  private shutDown = false;
  private readonly toolsChanged: ((upstreamId: string) => void)[] = [];
  readonly enabled: boolean;
  /** How images run; undefined while the container form is off (no UPSTREAMS_STDIO_DOCKER_HOST). */
  readonly containers?: ContainerSettings;

  constructor(config: AppConfig) {
    this.enabled = config.UPSTREAMS_STDIO === 'true';
    this.limits = { concurrency: config.UPSTREAMS_STDIO_CONCURRENCY, idleMs: config.UPSTREAMS_STDIO_IDLE_SECONDS * 1000 };
    if (this.enabled && config.UPSTREAMS_STDIO_DOCKER_HOST) {
      this.containers = {
        dockerHost: config.UPSTREAMS_STDIO_DOCKER_HOST,
        memory: config.UPSTREAMS_STDIO_CONTAINER_MEMORY,
        cpus: config.UPSTREAMS_STDIO_CONTAINER_CPUS,
        pids: config.UPSTREAMS_STDIO_CONTAINER_PIDS,
        tmpfsMiB: config.UPSTREAMS_STDIO_CONTAINER_TMPFS_MIB,
        user: config.UPSTREAMS_STDIO_CONTAINER_USER,
      };
    }
  }

  /** Containers an earlier process on this host left when it crashed are removed before any call starts new ones. */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.containers) return;
    try {
      const removed = await removeLeftovers(this.containers.dockerHost);
      if (removed.length > 0) this.logger.warn(`Removed ${removed.length} stdio upstream container(s) an earlier service process left: ${removed.join(', ')}`);
    } catch (err) {
      this.logger.warn(`Could not look for leftover stdio upstream containers: ${(err as Error).message}`);
    }
  }

  /** Runs `work` with the upstream's client in one of its slots, starting its process first when none runs. */
  use<T>(upstream: { id: string; name: string }, start: () => Promise<StdioStart>, signal: AbortSignal, work: (client: Client) => Promise<T>): Promise<T> {
    if (!this.enabled) return Promise.reject(new ToolError(`Upstream '${upstream.name}' is a stdio server, and stdio upstreams are off (UPSTREAMS_STDIO)`, { details: { upstream: upstream.name } }));
    // A call arriving after shutdown must not start a process nobody would stop.
    if (this.shutDown) return Promise.reject(new ToolError(`Upstream '${upstream.name}' is shutting down`, { retryable: true, details: { upstream: upstream.name } }));
    let server = this.servers.get(upstream.id);
    if (!server) {
      const id = upstream.id;
      server = new SupervisedServer(upstream.name, start, this.limits, this.logger, () => this.toolsChanged.forEach((listener) => listener(id)));
      this.servers.set(upstream.id, server);
    }
    return server.use(signal, work);
  }

  /** `listener` hears each running server's `notifications/tools/list_changed`, by upstream id. */
  onToolsChanged(listener: (upstreamId: string) => void): void {
    this.toolsChanged.push(listener);
  }

  /** The upstream's process id in this process, or null when none runs. */
  pidOf(upstreamId: string): number | null {
    return this.servers.get(upstreamId)?.pid ?? null;
  }

  /** The name of the upstream's container in this process, or null when none runs (or it is not an image). */
  containerOf(upstreamId: string): string | null {
    return this.servers.get(upstreamId)?.containerName ?? null;
  }

  /** Stops the upstream's process (it was deleted). */
  async stop(upstreamId: string): Promise<void> {
    const server = this.servers.get(upstreamId);
    this.servers.delete(upstreamId);
    await server?.close();
  }

  async onApplicationShutdown(): Promise<void> {
    this.shutDown = true;
    const servers = [...this.servers.values()];
    this.servers.clear();
    await Promise.all(servers.map((server) => server.close()));
  }
}
