import { spawn, ChildProcess, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import Redis from 'ioredis';
import { freePort } from './free-port';

export interface RedisServer {
  url: string;
  port: number;
  /** Removes it for good. */
  stop(): Promise<void>;
  /** An outage: the server dies (SIGKILL) but can come back with `restart`. */
  kill(): Promise<void>;
  /** Starts it again on the same port, as a Redis that comes back would; with `appendonly` it loads the AOF it kept. */
  restart(options?: { appendonly?: boolean }): Promise<void>;
}

export function findRedisServer(): string | null {
  try {
    return execFileSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}


async function waitForPing(url: string, deadline: number): Promise<void> {
  for (;;) {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined); // refused until the server is up: connect() reports it
    try {
      await client.connect();
      if ((await client.ping()) === 'PONG') return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`redis-server on ${url} did not answer: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      client.disconnect();
    }
  }
}

/** A throwaway redis-server on a free loopback port: no persistence (unless a restart asks for it), its own temp dir. */
export async function startRedis(): Promise<RedisServer> {
  const binary = findRedisServer();
  if (!binary) throw new Error('redis-server not found on PATH (apt-get install redis-server)');
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'tos-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;

  const start = async ({ appendonly = false } = {}) => {
    child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', appendonly ? 'yes' : 'no', '--dir', dir], { stdio: 'ignore' });
    await waitForPing(url, Date.now() + 10_000);
  };
  const kill = async () => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill('SIGKILL');
    });
  };
  await start();
  return {
    url,
    port,
    kill,
    restart: start,
    stop: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
