/**
 * A Node process of our own, forked on first use (and again after it ends) under Node's permission
 * model, that answers requests over its IPC channel. Code that handles caller-supplied files runs
 * in one, so what it may write is decided by the process's flags, not by path checks alone. A
 * message from the child with a numeric `id` answers the request of that id; any other is an event.
 */
import { Logger } from '@nestjs/common';
import { fork, type ChildProcess } from 'node:child_process';
import { StderrLog } from './stderr-log';

/** Node 20 spells the permission model's switch --experimental-permission; later releases --permission. */
const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission';

/** The permission model, reads anywhere, and whatever `grants` adds (`--allow-fs-write=…`, `--allow-worker`); nothing else. */
export function permissionFlags(...grants: string[]): string[] {
  return [PERMISSION_FLAG, '--allow-fs-read=*', ...grants, '--no-warnings'];
}

export interface ConfinedChildOptions {
  /** Names the process in the log, where its stderr goes (a V8 crash report, say). */
  name: string;
  /** The child's module; a `.ts` file runs under ts-node, as under Jest or `start:dev`. */
  file: string;
  execArgv: string[];
  args?: string[];
  /** What a message that answers no request is for. */
  onEvent?: (message: unknown) => void;
  /** The error a pending request gets when the process ends under it. */
  ended: (why: string) => Error;
}

interface Pending {
  child: ChildProcess;
  resolve: (reply: unknown) => void;
  reject: (error: Error) => void;
}

export class ConfinedChild {
  private child?: ChildProcess;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly stderr: StderrLog;

  constructor(private readonly options: ConfinedChildOptions) {
    const logger = new Logger(options.name);
    // What a child writes on stderr is a fault report: a warning, whatever the line.
    this.stderr = new StderrLog(options.name, { log: (line) => logger.warn(line), warn: (line) => logger.warn(line) });
  }

  /** Sends `body` with a new `id`; `reply` settles with the child's answer to that id. */
  request<T>(body: object): { id: number; reply: Promise<T> } {
    const id = (this.nextId += 1);
    const child = this.process();
    const reply = new Promise<T>((resolve, reject) => {
      this.pending.set(id, { child, resolve: resolve as (reply: unknown) => void, reject });
      child.channel?.ref();
      child.send({ ...body, id });
    });
    return { id, reply };
  }

  /** Stops waiting for request `id` (its reply, if one comes, is dropped) and tells the child `body`. */
  forget(id: number, body: object): void {
    const pending = this.settle(id);
    if (pending?.child.connected) pending.child.send(body);
  }

  close(): void {
    this.child?.kill();
    this.child = undefined;
  }

  private settle(id: number): Pending | undefined {
    const pending = this.pending.get(id);
    this.pending.delete(id);
    // An idle child must not keep the service's event loop alive.
    if (pending && ![...this.pending.values()].some((other) => other.child === pending.child)) pending.child.channel?.unref();
    return pending;
  }

  private process(): ChildProcess {
    if (this.child) return this.child;
    const { file, execArgv, args = [], onEvent, ended } = this.options;
    const child = fork(file, args, {
      execArgv: [...execArgv, ...(file.endsWith('.ts') ? ['--require', 'ts-node/register/transpile-only'] : [])],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    });
    this.stderr.follow(child.stderr);
    child.on('message', (message: { id?: unknown }) => {
      if (typeof message.id === 'number') this.settle(message.id)?.resolve(message);
      else onEvent?.(message);
    });
    const gone = (why: string) => {
      if (this.child === child) this.child = undefined;
      for (const [id, pending] of this.pending) if (pending.child === child) this.settle(id)?.reject(ended(why));
    };
    child.on('exit', (code, signal) => gone(signal ?? `exit code ${code}`));
    child.on('error', (error) => gone(error.message));
    child.unref();
    child.channel?.unref();
    this.child = child;
    return child;
  }
}
