/**
 * A real Docker engine (Debian's `docker.io`) and registry (`docker-registry`) for the build tools'
 * tests, each private to the test run. dockerd runs as root with its own data root, exec root,
 * pid file and a unix socket in a temp dir, and always with the flags that keep it off the host's
 * firewall and routes; its RUN steps get no network. Nothing can be pulled: the base
 * image `busybox:local` is imported from Debian's static busybox. The registry listens on a free
 * loopback port with filesystem storage. `stop` ends both, unmounts what dockerd mounted and
 * removes the temp dirs.
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import Docker from 'dockerode';
import { freePort } from '../free-port';
import { answers200, startDaemon, type Daemon } from '../netmon/daemon';

export const BASE_IMAGE = 'busybox:local';
/** The Docker projects the build tools' tests and examples build. */
export const DOCKER_FIXTURES = path.join(__dirname, '..', '..', '..', 'tools', 'automation', 'fixtures', 'docker');
const DOCKERD = '/usr/sbin/dockerd';
const REGISTRY = '/usr/bin/docker-registry';
const BUSYBOX = '/bin/busybox';
/** Never touch the host's firewall, routes or bridges: this engine runs on shared machines. */
const NETWORK_SAFETY = ['--iptables=false', '--ip6tables=false', '--ip-forward=false', '--ip-masq=false', '--bridge=none', '--userland-proxy=false'];

export function findDockerd(): string | null {
  return existsSync(DOCKERD) && existsSync(REGISTRY) && existsSync(BUSYBOX) && process.getuid?.() === 0 ? DOCKERD : null;
}

export interface DockerEngine {
  /** `unix:///…/docker.sock`, as DOCKER_HOST. */
  host: string;
  docker: Docker;
  /** Milliseconds from spawn to the first answer of the engine API. */
  startupMs: number;
  stop(): Promise<void>;
}

export interface DockerEngineOptions {
  /**
   * Keep the engine's images and containers on a tmpfs of this many MiB: for suites that build
   * large images, whose hundreds of thousands of layer files then cost no disk writes to make
   * and nothing to delete (the unmount frees them).
   */
  tmpfsMiB?: number;
}

export async function startDockerEngine(options: DockerEngineOptions = {}): Promise<DockerEngine> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tos-dockerd-'));
  const socket = path.join(dir, 'docker.sock');
  const started = Date.now();
  let daemon: Daemon | undefined;
  const cleanup = async () => {
    await daemon?.stop();
    unmountUnder(dir);
    rmSync(dir, { recursive: true, force: true });
  };
  const docker = new Docker({ socketPath: socket });
  try {
    if (options.tmpfsMiB) {
      mkdirSync(path.join(dir, 'data'));
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${options.tmpfsMiB}m,mode=0710`, 'tos-dockerd-data', path.join(dir, 'data')]);
    }
    daemon = await startDaemon({
      name: 'dockerd',
      binary: DOCKERD,
      args: () => [`--data-root=${path.join(dir, 'data')}`, `--exec-root=${path.join(dir, 'exec')}`, `--pidfile=${path.join(dir, 'dockerd.pid')}`, `--host=unix://${socket}`, ...NETWORK_SAFETY, '--log-level=warn'],
      ready: async () => existsSync(socket) && (await docker.ping().then(() => true, () => false)),
      timeoutMs: 30_000,
      stopSignal: 'SIGTERM',
    });
    const startupMs = Date.now() - started;
    await importBusybox(docker, dir);
    return { host: `unix://${socket}`, docker, startupMs, stop: cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** A rootfs of Debian's static busybox and its applets, imported as BASE_IMAGE. */
async function importBusybox(docker: Docker, dir: string): Promise<void> {
  const rootfs = path.join(dir, 'rootfs');
  mkdirSync(path.join(rootfs, 'bin'), { recursive: true });
  copyFileSync(BUSYBOX, path.join(rootfs, 'bin', 'busybox'));
  for (const applet of ['sh', 'echo', 'cat', 'ls', 'sleep', 'true', 'false', 'mkdir', 'cp', 'rm', 'env']) symlinkSync('busybox', path.join(rootfs, 'bin', applet));
  const tar = spawn('tar', ['-C', rootfs, '-c', '.'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [repo, tag] = BASE_IMAGE.split(':');
  const stream = await docker.importImage(tar.stdout as never, { repo, tag });
  await new Promise((resolve, reject) => docker.modem.followProgress(stream, (err) => (err ? reject(err) : resolve(undefined))));
}

/** dockerd leaves overlay and shm mounts behind when killed: unmount anything under `dir`. */
function unmountUnder(dir: string): void {
  const mounts = execFileSync('findmnt', ['-rn', '-o', 'TARGET'], { encoding: 'utf8' })
    .split('\n')
    .filter((target) => target.startsWith(dir))
    .sort((a, b) => b.length - a.length);
  for (const target of mounts) {
    try {
      execFileSync('umount', ['-l', target], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  }
}

export interface Registry {
  /** `127.0.0.1:port`: the registry part of an image name. */
  address: string;
  url: string;
  stop(): Promise<void>;
}

/** Debian's docker-registry on a free loopback port, storage in its temp dir, no auth. */
export async function startRegistry(): Promise<Registry> {
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const url = `http://${address}`;
  const daemon = await startDaemon({
    name: 'docker-registry',
    binary: REGISTRY,
    prepare: (dir) =>
      writeFileSync(
        path.join(dir, 'config.yml'),
        ['version: 0.1', 'log:', '  level: warn', 'storage:', '  filesystem:', `    rootdirectory: ${path.join(dir, 'data')}`, 'http:', `  addr: ${address}`, ''].join('\n'),
      ),
    args: (dir) => ['serve', path.join(dir, 'config.yml')],
    ready: () => answers200(`${url}/v2/`),
  });
  return { address, url, stop: () => daemon.stop() };
}

/** Containers the engine is running (a cancelled build must leave none). */
export async function runningContainers(docker: Docker): Promise<string[]> {
  return (await docker.listContainers()).map((container) => container.Id);
}

/** The image scanned by image-scan's tests and example: Debian packages, npm and Python packages, a deleted package. */
export const SCAN_FIXTURE = path.join(__dirname, '..', '..', '..', 'tools', 'security', 'fixtures', 'image');

/** Builds the folder `dir` (a Dockerfile and its context) as `tag` on the engine; the image id. */
export async function buildFixtureImage(docker: Docker, dir: string, tag: string): Promise<string> {
  const tar = spawn('tar', ['-C', dir, '-c', '.'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const stream = await docker.buildImage(tar.stdout as never, { t: tag, version: '1', networkmode: 'none', rm: true, forcerm: true } as Docker.ImageBuildOptions);
  const events = await new Promise<{ error?: string; aux?: { ID?: string } }[]>((resolve, reject) => docker.modem.followProgress(stream, (err, output) => (err ? reject(err) : resolve(output))));
  const failure = events.find((event) => event.error);
  if (failure) throw new Error(`building ${tag} failed: ${failure.error}`);
  return events.find((event) => event.aux?.ID)!.aux!.ID!;
}

/** A way to the engine that refuses, and records, every request that makes it connect out. */
export interface GuardedEngine {
  /** `unix:///…/guard.sock`, as DOCKER_HOST. */
  host: string;
  /** `METHOD path` of each build, pull or push the engine was asked for (and was not given). */
  refused: string[];
  stop(): Promise<void>;
}

const CONNECTING = /^\/(v[\d.]+\/)?(build|images\/create|images\/.+\/push)(\?|$)/;

/**
 * A unix-socket proxy in front of `engine`: inspections and the like pass, builds, pulls and
 * pushes are answered 403 and recorded. A test of a refusal made "before the engine is asked"
 * holds even against code that would ask: nothing reaches the engine that could send a packet.
 */
export async function guardEngine(engine: DockerEngine): Promise<GuardedEngine> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tos-docker-guard-'));
  const socket = path.join(dir, 'guard.sock');
  const engineSocket = engine.host.slice('unix://'.length);
  const refused: string[] = [];
  const server = createServer((req, res) => {
    if (CONNECTING.test(req.url ?? '')) {
      refused.push(`${req.method} ${req.url}`);
      req.resume();
      res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'refused by the test: this request makes the engine connect out' }));
      return;
    }
    const upstream = request({ socketPath: engineSocket, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  return {
    host: `unix://${socket}`,
    refused,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
