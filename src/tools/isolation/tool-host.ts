/**
 * The process that holds the isolated pool's threads, apart from the service: isolated tools read
 * caller-supplied trees and expressions, so they run where Node's permission model lets them read
 * but never write a file nor start a program (no `--allow-fs-write`, no `--allow-child-process`).
 * Even a future bug that hands a tool a path of the caller's choosing cannot write through it, and a
 * thread that crashes the process ends these calls, not the service's. Started on first use, started
 * again after it ends; the service talks to it over the fork's IPC channel as it would to Piscina.
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

export interface ToolHostOptions {
  /** The Piscina worker file the threads run. */
  workerFile: string;
  threads: number;
  idleTimeoutMs: number;
  threadHeapMb: number;
}

/** What the service asks of the host, and what the host says back. */
export type ToHost = { kind: 'run'; id: number; task: unknown } | { kind: 'abort'; id: number };
export type FromHost =
  | { kind: 'message'; message: unknown }
  | { kind: 'done'; id: number; outcome: unknown }
  | { kind: 'failed'; id: number; error: { name: string; message: string; code?: string } };

/** The host process ended (killed, or aborted by V8) while the call ran in it. */
export class ToolHostEnded extends Error {}

/** Node 20 spells the permission model's switch --experimental-permission; later releases --permission. */
const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission';

/** Reads anywhere, threads allowed; no file writes and no child processes are granted. */
export const TOOL_HOST_EXEC_ARGV = [PERMISSION_FLAG, '--allow-fs-read=*', '--allow-worker', '--no-warnings'];

interface Pending {
  child: ChildProcess;
  resolve: (outcome: unknown) => void;
  reject: (error: Error) => void;
}

export class ToolHost {
  private child?: ChildProcess;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();

  constructor(
    private readonly options: ToolHostOptions,
    /** Where each thread message (progress, log lines, a call's end) goes. */
    private readonly onMessage: (message: unknown) => void,
  ) {}

  /** Runs a task in a thread of the host; an abort rejects at once and terminates the thread, as Piscina's own signal does. */
  run(task: unknown, signal: AbortSignal): Promise<unknown> {
    if (signal.aborted) return Promise.reject(aborted(signal.reason));
    const id = (this.nextId += 1);
    const child = this.process();
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.settle(id);
        child.send({ kind: 'abort', id } satisfies ToHost);
        reject(aborted(signal.reason));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const unlisten = () => signal.removeEventListener('abort', onAbort);
      this.pending.set(id, { child, resolve: (outcome) => (unlisten(), resolve(outcome)), reject: (error) => (unlisten(), reject(error)) });
      child.channel?.ref();
      child.send({ kind: 'run', id, task } satisfies ToHost);
    });
  }

  destroy(): void {
    this.child?.kill();
    this.child = undefined;
  }

  private settle(id: number): Pending | undefined {
    const pending = this.pending.get(id);
    this.pending.delete(id);
    if (![...this.pending.values()].some((other) => other.child === pending?.child)) pending?.child.channel?.unref();
    return pending;
  }

  private process(): ChildProcess {
    if (this.child) return this.child;
    const typescript = HOST_FILE.endsWith('.ts');
    const child = fork(HOST_FILE, [JSON.stringify(this.options)], {
      execArgv: [...TOOL_HOST_EXEC_ARGV, ...(typescript ? ['--require', 'ts-node/register/transpile-only'] : [])],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', (said: FromHost) => {
      if (said.kind === 'message') this.onMessage(said.message);
      else if (said.kind === 'done') this.settle(said.id)?.resolve(said.outcome);
      else this.settle(said.id)?.reject(Object.assign(new Error(said.error.message), { name: said.error.name, code: said.error.code }));
    });
    const ended = (why: string) => {
      if (this.child === child) this.child = undefined;
      for (const [id, pending] of this.pending) {
        if (pending.child === child) this.settle(id)?.reject(new ToolHostEnded(`The isolated tools' process ended (${why}) during the call`));
      }
    };
    child.on('exit', (code, signal) => ended(signal ?? `exit code ${code}`));
    child.on('error', (error) => ended(error.message));
    child.unref();
    child.channel?.unref();
    this.child = child;
    return child;
  }
}

/** The error Piscina rejects an aborted task with, so callers see one shape whichever runs the threads. */
function aborted(reason: unknown): Error {
  return Object.assign(new Error('The task has been aborted', { cause: reason }), { name: 'AbortError' });
}

const HOST_FILE = path.join(__dirname, `tool-host.child${path.extname(__filename)}`);
