/**
 * Unpacks caller archives in a process of its own whose file-system writes Node's permission
 * model confines to one folder (the tree cache): defence in depth behind TreeShape's checks, so a
 * future bug that lets a path through still cannot write outside it. The process also bounds the
 * unpack's memory, and is started on first use and kept for the next archive.
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { ArchiveRefused, type ArchiveFormat, type ArchiveLimits, type ArchiveSource } from './archive';

export interface UnpackRequest {
  id: number;
  /** Bytes cross the IPC channel as a Uint8Array; a file is read by the unpacking process itself. */
  archive: Uint8Array | { file: string };
  format: ArchiveFormat;
  limits: ArchiveLimits;
  /** The folder to fill; the process may write nowhere outside its confinement. */
  into: string;
}

/** A link of the archive: made by the service once every file is written. */
export interface ArchiveLink {
  path: string;
  target: string;
}

export type UnpackReply = { id: number } & (
  | { ok: true; files: number; links: ArchiveLink[] }
  | { ok: false; refused: boolean; message: string; code?: string }
);

/** The unpack process's heap: archives stream through it a chunk at a time. */
const UNPACK_HEAP_MB = 256;

/** Node 20 spells the permission model's switch --experimental-permission; later releases --permission. */
const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission';

/** The flags of a Node process that may read anything but write only beneath `folder`. */
export function confinedExecArgv(folder: string): string[] {
  return [PERMISSION_FLAG, '--allow-fs-read=*', `--allow-fs-write=${path.resolve(folder)}`, '--no-warnings'];
}

export class ConfinedUnpacker {
  private child?: ChildProcess;
  private nextId = 0;
  private readonly pending = new Map<number, { child: ChildProcess; resolve: (reply: UnpackReply) => void; reject: (error: Error) => void }>();

  /** `confinedTo` must exist: it is where the process may write. */
  constructor(private readonly confinedTo: string) {}

  /** Fills `into` with the archive's folders and files; resolves with its links, judged, for the caller to make. */
  async unpack(archive: ArchiveSource, format: ArchiveFormat, limits: ArchiveLimits, into: string): Promise<ArchiveLink[]> {
    const id = (this.nextId += 1);
    const child = this.process();
    const reply = await new Promise<UnpackReply>((resolve, reject) => {
      this.pending.set(id, { child, resolve, reject });
      child.channel?.ref();
      child.send({ id, archive, format, limits, into } satisfies UnpackRequest);
    });
    if (reply.ok) return reply.links;
    if (reply.refused) throw new ArchiveRefused(reply.message);
    throw Object.assign(new Error(`Unpacking failed: ${reply.message}`), { code: reply.code });
  }

  close(): void {
    this.child?.kill();
    this.child = undefined;
  }

  private process(): ChildProcess {
    if (this.child) return this.child;
    const child = fork(CHILD_FILE, [], {
      execArgv: [...confinedExecArgv(this.confinedTo), `--max-old-space-size=${UNPACK_HEAP_MB}`, ...(CHILD_FILE.endsWith('.ts') ? ['--require', 'ts-node/register/transpile-only'] : [])],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', (reply: UnpackReply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) child.channel?.unref();
      waiting?.resolve(reply);
    });
    const ended = (why: string) => {
      if (this.child === child) this.child = undefined;
      for (const [id, waiting] of this.pending) {
        if (waiting.child !== child) continue;
        this.pending.delete(id);
        waiting.reject(new Error(`The unpacking process ended (${why}) before the archive was unpacked`));
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

const CHILD_FILE = path.join(__dirname, `unpack.child${path.extname(__filename)}`);
