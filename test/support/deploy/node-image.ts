/**
 * Node.js base images for building the repository's Dockerfile on the private test engine, where
 * nothing can be pulled (no node:20-bookworm-slim). Both are `docker import`s of a root file system
 * assembled from this machine: its node binary and the shared libraries `ldd` lists for it, its npm,
 * Debian's static busybox for /bin/sh and the tools a RUN step uses, and passwd/group naming root
 * and `node` (1000) as the official images do.
 *
 * - NODE_BASE_IMAGE: the runtime stage's base (the official slim image's role).
 * - NODE_BUILD_IMAGE: the same plus this machine's npm cache and a global npmrc with `offline=true`,
 *   so the compile stage's `npm ci` installs the locked packages with no registry.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { DockerCli } from './docker-cli';
import { npmCacheFor } from './npm-offline-cache';

export const NODE_BASE_IMAGE = 'tos-node:local';
export const NODE_BUILD_IMAGE = 'tos-node-build:local';
const BUSYBOX = '/bin/busybox';
/** What the Dockerfile's RUN steps and npm's scripts call. */
const APPLETS = ['sh', 'env', 'find', 'rm', 'mkdir', 'cp', 'mv', 'ls', 'cat', 'chmod', 'ln', 'test', '[', 'true', 'false', 'echo', 'sleep'];

/** Imports both images into the engine `docker` drives; the build image gets the npm cache `lockfile` needs. */
export async function importNodeImages(docker: DockerCli, lockfile: string): Promise<void> {
  await withBaseImage(docker, async (rootfs) => {
    const npmCache = npmCacheFor(lockfile);
    writeFileSync(path.join(rootfs, 'usr/local/etc/npmrc'), 'cache=/npm-cache\noffline=true\n');
    // Other npm processes may be writing to the cache meanwhile: its tmp is left out, and a file
    // that grew while read (tar's exit 1) is still whole up to where it was read.
    const cacheParts = ['_cacache/index-v5', '_cacache/content-v2'];
    await importTar(docker, NODE_BUILD_IMAGE, ['-C', rootfs, '.', '--warning=no-file-changed', '-C', npmCache, '--transform', 's,^_cacache,npm-cache/_cacache,', ...cacheParts]);
  });
}

/** Imports NODE_BASE_IMAGE only (for images that add prepared files, no `npm ci`). */
export async function importNodeBaseImage(docker: DockerCli): Promise<void> {
  await withBaseImage(docker, async () => undefined);
}

/** Assembles the root file system, imports it as NODE_BASE_IMAGE, then hands it to `more` before it is removed. */
async function withBaseImage(docker: DockerCli, more: (rootfs: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tos-node-rootfs-'));
  try {
    const rootfs = path.join(dir, 'rootfs');
    assembleRootfs(rootfs);
    await importTar(docker, NODE_BASE_IMAGE, ['-C', rootfs, '.']);
    await more(rootfs);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function assembleRootfs(rootfs: string): void {
  const at = (...parts: string[]) => path.join(rootfs, ...parts);
  for (const folder of ['usr/local/bin', 'usr/local/lib/node_modules', 'usr/local/etc', 'usr/bin', 'bin', 'etc', 'root', 'home/node', 'tmp']) mkdirSync(at(folder), { recursive: true });
  chmodSync(at('tmp'), 0o1777);
  copyFileSync(process.execPath, at('usr/local/bin/node'));
  chmodSync(at('usr/local/bin/node'), 0o755);
  for (const library of sharedLibraries(process.execPath)) {
    mkdirSync(at(path.dirname(library)), { recursive: true });
    copyFileSync(realpathSync(library), at(library));
  }
  const npm = path.dirname(path.dirname(realpathSync(execFileSync('which', ['npm'], { encoding: 'utf8' }).trim())));
  cpSync(npm, at('usr/local/lib/node_modules/npm'), { recursive: true });
  symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', at('usr/local/bin/npm'));
  symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', at('usr/local/bin/npx'));
  copyFileSync(BUSYBOX, at('bin/busybox'));
  for (const applet of APPLETS) symlinkSync('busybox', at('bin', applet));
  symlinkSync('/bin/busybox', at('usr/bin/env')); // npm's `#!/usr/bin/env node`
  writeFileSync(at('etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n');
  writeFileSync(at('etc/group'), 'root:x:0:\nnode:x:1000:\n');
  chmodSync(at('home/node'), 0o755);
}

/** The absolute paths of the libraries `ldd` resolves for `binary` (the loader included). */
function sharedLibraries(binary: string): string[] {
  return execFileSync('ldd', [binary], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /(\/\S+)\s+\(0x/.exec(line)?.[1])
    .filter((library): library is string => !!library);
}

async function importTar(docker: DockerCli, tag: string, tarArgs: string[]): Promise<void> {
  const tar = spawn('tar', ['--numeric-owner', '--owner=0', '--group=0', '-c', ...tarArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => tar.once('exit', resolve));
  await docker(['import', '--change', 'CMD ["node"]', '-', tag], tar.stdout!);
  const code = await exited;
  if (code !== 0 && code !== 1) throw new Error(`tar for ${tag} failed (${code})`);
}
