/**
 * The process that holds the isolated pool's threads, apart from the service: isolated tools read
 * caller-supplied trees and expressions, so they run where Node's permission model lets them read
 * but never write a file nor start a program (no `--allow-fs-write`, no `--allow-child-process`).
 * Even a future bug that hands a tool a path of the caller's choosing cannot write through it, and a
 * thread that crashes the process ends these calls, not the service's. Started on first use, started
 * again after it ends; the service talks to it over the fork's IPC channel as it would to Piscina.
 */
import * as path from 'node:path';
import { ConfinedChild, permissionFlags } from '../../common/confined-child';

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

export class ToolHost {
  private readonly child: ConfinedChild;

  /** `onMessage` gets each thread message (progress, log lines, a call's end). */
  constructor(options: ToolHostOptions, onMessage: (message: unknown) => void) {
    this.child = new ConfinedChild({
      name: 'ToolHost',
      file: HOST_FILE,
      execArgv: permissionFlags('--allow-worker'),
      args: [JSON.stringify(options)],
      onEvent: (said) => onMessage((said as Extract<FromHost, { kind: 'message' }>).message),
      ended: (why) => new ToolHostEnded(`The isolated tools' process ended (${why}) during the call`),
    });
  }

  /** Runs a task in a thread of the host; an abort rejects at once and terminates the thread, as Piscina's own signal does. */
  async run(task: unknown, signal: AbortSignal): Promise<unknown> {
    if (signal.aborted) throw aborted(signal.reason);
    const { id, reply } = this.child.request<Exclude<FromHost, { kind: 'message' }>>({ kind: 'run', task });
    const said = await new Promise<Exclude<FromHost, { kind: 'message' }>>((resolve, reject) => {
      const onAbort = () => {
        this.child.forget(id, { kind: 'abort', id } satisfies ToHost);
        reject(aborted(signal.reason));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      reply.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
    if (said.kind === 'done') return said.outcome;
    throw Object.assign(new Error(said.error.message), { name: said.error.name, code: said.error.code });
  }

  destroy(): void {
    this.child.close();
  }
}

/** The error Piscina rejects an aborted task with, so callers see one shape whichever runs the threads. */
function aborted(reason: unknown): Error {
  return Object.assign(new Error('The task has been aborted', { cause: reason }), { name: 'AbortError' });
}

const HOST_FILE = path.join(__dirname, `tool-host.child${path.extname(__filename)}`);
