/**
 * The one way the benchmark starts a server: spawn it, poll a readiness probe until it answers
 * (bounded), and hand back its start-up time, a resident-memory reader and a stop().
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import * as path from 'node:path';

export interface ReadyProcess {
  pid: number;
  /** Milliseconds from spawn to the first successful probe. */
  startupMs: number;
  /** Resident set size (VmRSS of /proc/<pid>/status) in MiB. */
  rssMb(): number;
  /** CPU time the process has used so far, user and system (/proc/<pid>/stat), in milliseconds. */
  cpuMs(): number;
  /** The last lines the process wrote (stdout and stderr). */
  outputTail(): string;
  /** SIGTERM, SIGKILL after a grace period; resolves once the process has exited. */
  stop(): Promise<void>;
}

export interface SpawnOptions {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** Resolves true once the process serves; false or a rejection means "not yet". */
  isReady(): Promise<boolean>;
  timeoutMs?: number;
  signal?: AbortSignal;
}

const ROOT = path.join(__dirname, '..');
let ticksPerSecond: number | undefined;
/** The unit of /proc/<pid>/stat's times (USER_HZ, 100 on Linux builds we know, read rather than assumed). */
const clockTicksPerSecond = () => (ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()));
const POLL_INTERVAL_MS = 50;
const STOP_GRACE_MS = 10_000;
const OUTPUT_KEPT_CHARS = 4_000;

export async function spawnUntilReady(options: SpawnOptions): Promise<ReadyProcess> {
  const { name, timeoutMs = 60_000, signal } = options;
  const started = performance.now();
  const child = spawn(options.command, options.args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: string) => (output = (output + chunk).slice(-OUTPUT_KEPT_CHARS));
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', (error) => keep(`\n[spawn error] ${error.message}\n`));
  const running = () => child.exitCode === null && child.signalCode === null;

  const stop = async (): Promise<void> => {
    if (!running() || child.pid === undefined) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  };

  try {
    for (;;) {
      signal?.throwIfAborted();
      if (!running() || child.pid === undefined) throw new Error(`${name} exited before it was ready (code ${child.exitCode}, signal ${child.signalCode})`);
      if (await options.isReady().catch(() => false)) break;
      if (performance.now() - started > timeoutMs) throw new Error(`${name} was not ready within ${timeoutMs} ms`);
      await sleep(POLL_INTERVAL_MS);
    }
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n--- ${name} output ---\n${output}`);
  }

  const pid = child.pid!;
  return {
    pid,
    startupMs: Math.round(performance.now() - started),
    rssMb: () => {
      const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return match ? Math.round(Number(match[1]) / 102.4) / 10 : NaN;
    },
    cpuMs: () => {
      // Fields 14 and 15 (utime, stime) follow the parenthesised command name, which may hold spaces.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicksPerSecond();
    },
    outputTail: () => output,
    stop,
  };
}

/**
 * The built service (`dist/src/main.js`, optionally in one role), ready once `isReady` answers
 * true. `build` names another compiled tree (a copy of an earlier dist/ inside this checkout, so
 * that it finds the same node_modules) to measure against. `cpuProfileDir`: the process writes a
 * V8 CPU profile there when it exits (`--cpu-prof`, which NODE_OPTIONS does not accept).
 */
export function spawnBuiltService(
  options: Omit<SpawnOptions, 'command' | 'args' | 'cwd'> & { role?: 'api' | 'worker'; build?: string; cpuProfileDir?: string },
): Promise<ReadyProcess> {
  const { role, build = 'dist', cpuProfileDir, ...rest } = options;
  const profiling = cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`, `--cpu-prof-name=${rest.name.replace(/\W+/g, '-')}.${Date.now()}.cpuprofile`] : [];
  return spawnUntilReady({ ...rest, command: process.execPath, args: [...profiling, path.join(build, 'src/main.js'), ...(role ? ['--role', role] : [])], cwd: ROOT });
}
