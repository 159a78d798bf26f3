/**
 * A real server binary (dnsmasq, prometheus, alertmanager) started for a test on loopback, in a
 * temp dir of its own, and stopped for good afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export interface Daemon {
  /** Its own temp directory (config, data), removed by `stop`. */
  dir: string;
  /** Everything it printed, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

export interface DaemonOptions {
  name: string;
  binary: string;
  args(dir: string): string[];
  /** Writes config files into `dir` before the start. */
  prepare?(dir: string): void;
  /** Resolves true once the server answers (polled every 50 ms). */
  ready(): Promise<boolean>;
  timeoutMs?: number;
  /** Sent first on stop (SIGKILL follows after 10 s): servers with children of their own (dockerd) clean them up on SIGTERM. */
  stopSignal?: NodeJS.Signals;
}

/** Starts `binary` and polls `ready` until it answers; a server that exits or never answers fails with its output. */
export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const dir = mkdtempSync(path.join(tmpdir(), `tos-${options.name}-`));
  options.prepare?.(dir);
  const child: ChildProcess = spawn(options.binary, options.args(dir), { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(options.stopSignal ?? 'SIGKILL');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(`${options.name} exited before it was ready:\n${output}`);
    }
    if (await options.ready().catch(() => false)) return { dir, output: () => output, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${options.name} did not answer within ${options.timeoutMs ?? 20_000} ms:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** True when `url` answers 200 (a readiness endpoint). */
export async function answers200(url: string): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
  await response.arrayBuffer();
  return response.status === 200;
}
