/**
 * A throwaway PostgreSQL server from the local binaries, on a free loopback port, for e2e runs.
 *
 * `initdb` and `postgres` refuse to run as root, so as root they run as the `postgres` system user
 * (runuser) on a temporary directory it owns. A small shell supervisor keeps the server tied to
 * this process: it holds our end of a stdin pipe, and when the pipe closes (stop(), or the test
 * runner dying in any way, SIGKILL included) it shuts postgres down and removes the directory.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, chownSync, readdirSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freePort } from './free-port';

export interface PostgresServer {
  /** Superuser `postgres`, no password, database `postgres`. */
  url: string;
  /** Fast shutdown, SIGKILL after a timeout, then removes the temporary directory. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;
const STDERR_KEPT_CHARS = 4_000;
const SERVER_USER = 'postgres';
/** Throwaway data: durability off for speed; room for many test pools. */
const SERVER_SETTINGS = [
  'listen_addresses=127.0.0.1',
  'fsync=off',
  'synchronous_commit=off',
  'full_page_writes=off',
  'max_connections=200',
];

/**
 * `sh -c SUPERVISOR sh <dir> <postgres> <args...>`: runs postgres, exits with it. Stdin EOF sends it
 * SIGINT, postgres's "fast shutdown" (sessions rolled back, clients not waited for). The watcher
 * reads a saved copy of stdin (fd 3): a background job's own stdin is /dev/null.
 */
const SUPERVISOR = `
dir="$1"; shift
exec 3<&0
"$@" 3<&- </dev/null &
pid=$!
{ cat <&3 >/dev/null; kill -INT "$pid" 2>/dev/null; } &
wait "$pid"; status=$?
rm -rf "$dir"
exit "$status"
`;

/** The directory holding `initdb` and `postgres`: pg_config, else the newest Debian install, else PATH. */
export function findPostgresBinaries(): string | null {
  const candidates = [pgConfigBindir(), ...debianBindirs(), ...(process.env.PATH ?? '').split(path.delimiter)];
  return candidates.find((dir): dir is string => !!dir && hasServerBinaries(dir)) ?? null;
}

export async function startPostgres(): Promise<PostgresServer> {
  const bindir = findPostgresBinaries();
  if (!bindir) throw new Error('PostgreSQL server binaries (initdb, postgres) not found');
  const dir = await mkdtemp(path.join(tmpdir(), 'tos-pg-'));
  let server: ChildProcess | undefined;
  const stop = once(() => stopServer(server, dir));
  try {
    const asRoot = process.getuid?.() === 0;
    if (asRoot) chownSync(dir, ...systemUserIds(SERVER_USER));
    const asServerUser = (file: string, args: string[]): [string, string[]] =>
      asRoot ? ['runuser', ['-u', SERVER_USER, '--', file, ...args]] : [file, args];
    const dataDir = path.join(dir, 'data');

    // cwd: the server user may not be allowed into the caller's working directory
    const initdbArgs = ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'];
    const initdb = asServerUser(path.join(bindir, 'initdb'), initdbArgs);
    await promisify(execFile)(...initdb, { cwd: dir }).catch((error: { stderr?: string; message: string }) => {
      throw new Error(`initdb failed: ${error.stderr || error.message}`);
    });

    const port = await freePort();
    const postgres = [path.join(bindir, 'postgres'), '-D', dataDir, '-k', dir, '-p', String(port)];
    for (const setting of SERVER_SETTINGS) postgres.push('-c', setting);
    // detached: its own process group, for the SIGKILL fallback
    server = spawn(...asServerUser('sh', ['-c', SUPERVISOR, 'sh', dir, ...postgres]), {
      cwd: dir,
      detached: true,
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    await waitUntilReady(url, server);
    return { url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function pgConfigBindir(): string | undefined {
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

function debianBindirs(): string[] {
  try {
    return readdirSync('/usr/lib/postgresql')
      .filter((version) => /^\d+(\.\d+)?$/.test(version))
      .sort((a, b) => Number(b) - Number(a))
      .map((version) => path.join('/usr/lib/postgresql', version, 'bin'));
  } catch {
    return [];
  }
}

function hasServerBinaries(dir: string): boolean {
  try {
    accessSync(path.join(dir, 'initdb'), constants.X_OK);
    accessSync(path.join(dir, 'postgres'), constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function systemUserIds(user: string): [number, number] {
  const id = (flag: string) => Number(execFileSync('id', [flag, user], { encoding: 'utf8' }).trim());
  return [id('-u'), id('-g')];
}


async function waitUntilReady(url: string, server: ChildProcess): Promise<void> {
  let stderr = '';
  server.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-STDERR_KEPT_CHARS)));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      const exited = server.exitCode !== null || server.signalCode !== null;
      if (exited || Date.now() > deadline) {
        const why = exited ? `postgres exited (code ${server.exitCode}, signal ${server.signalCode})` : 'timed out';
        throw new Error(`PostgreSQL did not accept connections at ${url}: ${why}; last error: ${String(error)}\n${stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50)); // retry interval while the postmaster starts
    }
  }
}

async function stopServer(server: ChildProcess | undefined, dir: string): Promise<void> {
  if (server) {
    const running = server.exitCode === null && server.signalCode === null;
    const exited = running && new Promise((resolve) => server.once('exit', resolve));
    // The supervisor's cue for a fast shutdown; it also ends its watcher when postgres died on its own.
    server.stdin?.end();
    if (exited) {
      const timer = setTimeout(() => {
        try {
          process.kill(-server.pid!, 'SIGKILL');
        } catch {
          // the group is already gone
        }
      }, STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
  }
  rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let result: Promise<void> | undefined;
  return () => (result ??= fn());
}
