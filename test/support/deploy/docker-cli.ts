/** The `docker` command line (Debian's docker.io) against one engine, as a user would run it; the classic builder (no buildx here). */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export type DockerCli = (args: string[], input?: NodeJS.ReadableStream) => Promise<string>;

export function dockerCli(host: string): DockerCli {
  // A config folder of its own: no credentials or contexts of this machine's user.
  const env = { ...process.env, DOCKER_HOST: host, DOCKER_CONFIG: mkdtempSync(path.join(tmpdir(), 'tos-docker-config-')), DOCKER_BUILDKIT: '0' };
  return (args, input) =>
    new Promise((resolve, reject) => {
      const child = spawn('docker', args, { env, stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
      if (input) input.pipe(child.stdin!);
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-8_000)));
      child.once('error', reject);
      child.once('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`docker ${args.slice(0, 2).join(' ')} exited ${code}:\n${stdout.slice(-4_000)}\n${stderr}`))));
    });
}
