import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { isAlive } from '../common/process-alive';

/** Every container a service process starts carries these labels: which upstream, which process (host/pid/start). */
export const UPSTREAM_LABEL = 'tos.stdio.upstream';
export const OWNER_LABEL = 'tos.stdio.owner';
const DOCKER_TIMEOUT_MS = 15_000;

/** How the service runs a stdio upstream's image (docs/upstreams.md#the-container-form), from the UPSTREAMS_STDIO_CONTAINER_* settings. */
export interface ContainerSettings {
  /** The engine, as the docker CLI's DOCKER_HOST; empty: the container form is off. */
  dockerHost: string;
  memory: string;
  cpus: string;
  pids: number;
  tmpfsMiB: number;
  /** `--user` unless the registration names its own; empty: the image's. */
  user: string;
}

/** When this process started (ms since the epoch): tells this life from an earlier one with the same pid. */
const STARTED = Math.round(performance.timeOrigin);

/** This process as the owner label names it: `<host>/<pid>/<start>`. */
export const thisOwner = (): string => `${hostname()}/${process.pid}/${STARTED}`;

/** A container's name: the upstream's id and a random part (each process, each restart, its own). */
export const containerName = (upstreamId: string): string => `tos-stdio-${upstreamId}-${randomBytes(4).toString('hex')}`;

/**
 * The `docker run` options confining a stdio server: no capabilities, no privilege gain, a
 * read-only root with a small non-executable /tmp, caps on processes, memory (no swap beyond it)
 * and CPU, a non-root user, an init that reaps and forwards signals, and no network unless the
 * operator allowed egress. The labels let the service find and remove its leftovers.
 */
export function confinementArgs(settings: ContainerSettings, run: { name: string; upstreamId: string; user?: string; allowEgress: boolean }): string[] {
  const user = run.user ?? settings.user;
  return [
    '--init',
    '--name', run.name,
    '--label', `${UPSTREAM_LABEL}=${run.upstreamId}`,
    '--label', `${OWNER_LABEL}=${thisOwner()}`,
    '--cap-drop', 'ALL',
    '--security-opt', 'no-new-privileges',
    '--read-only',
    '--tmpfs', `/tmp:rw,noexec,nosuid,nodev,size=${settings.tmpfsMiB}m`,
    '--pids-limit', String(settings.pids),
    '--memory', settings.memory,
    '--memory-swap', settings.memory,
    '--cpus', settings.cpus,
    ...(user ? ['--user', user] : []),
    ...(run.allowEgress ? [] : ['--network', 'none']),
  ];
}

/** The docker CLI's environment: the engine, and only what the CLI needs to find itself and its config. */
export const dockerEnv = (dockerHost: string): Record<string, string> => ({ DOCKER_HOST: dockerHost });

/** Runs the docker CLI against `dockerHost`; its stdout. */
export function docker(dockerHost: string, args: string[]): Promise<string> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...(process.env.HOME && { HOME: process.env.HOME }), ...dockerEnv(dockerHost) };
  return new Promise((resolve, reject) =>
    execFile('docker', args, { env, timeout: DOCKER_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`docker ${args[0]} failed: ${(stderr || err.message).trim().slice(0, 500)}`)) : resolve(stdout),
    ),
  );
}

/** Removes the container if it still exists (a stop that the CLI's signals did not finish). */
export async function removeContainer(dockerHost: string, name: string): Promise<void> {
  await docker(dockerHost, ['rm', '-f', name]).catch(() => undefined);
}

/**
 * The containers this host's earlier service processes left (a crash leaves its containers
 * running): labelled with this host, and a pid that is no longer alive, or is ours from an earlier
 * start (a restarted container where the service is again pid 1). Removed; their names.
 */
export async function removeLeftovers(dockerHost: string): Promise<string[]> {
  const listed = await docker(dockerHost, ['ps', '-a', '--filter', `label=${OWNER_LABEL}`, '--format', `{{.Names}}\t{{.Label "${OWNER_LABEL}"}}`]);
  const host = hostname();
  const leftovers = listed
    .split('\n')
    .map((line) => line.split('\t'))
    .filter(([name, owner]) => {
      const [ownerHost, pidText, started] = owner?.split('/') ?? [];
      const pid = Number(pidText);
      if (!name || ownerHost !== host || !Number.isInteger(pid) || pid <= 0) return false;
      return pid === process.pid ? started !== String(STARTED) : !isAlive(pid);
    })
    .map(([name]) => name);
  if (leftovers.length > 0) await docker(dockerHost, ['rm', '-f', ...leftovers]);
  return leftovers;
}
