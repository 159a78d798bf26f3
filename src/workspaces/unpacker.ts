/**
 * Unpacks caller archives in a process of its own whose file-system writes Node's permission
 * model confines to one folder (the tree cache): defence in depth behind TreeShape's checks, so a
 * future bug that lets a path through still cannot write outside it. The process also bounds the
 * unpack's memory, and is started on first use and kept for the next archive.
 */
import * as path from 'node:path';
import { ConfinedChild, permissionFlags } from '../common/confined-child';
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

export class ConfinedUnpacker {
  private readonly child: ConfinedChild;

  /** `confinedTo` must exist: it is where the process may write. */
  constructor(confinedTo: string) {
    this.child = new ConfinedChild({
      name: 'ConfinedUnpacker',
      file: CHILD_FILE,
      execArgv: [...permissionFlags(`--allow-fs-write=${path.resolve(confinedTo)}`), `--max-old-space-size=${UNPACK_HEAP_MB}`],
      ended: (why) => new Error(`The unpacking process ended (${why}) before the archive was unpacked`),
    });
  }

  /** Fills `into` with the archive's folders and files; resolves with its links, judged, for the caller to make. */
  async unpack(archive: ArchiveSource, format: ArchiveFormat, limits: ArchiveLimits, into: string): Promise<ArchiveLink[]> {
    const reply = await this.child.request<UnpackReply>({ archive, format, limits, into } satisfies Omit<UnpackRequest, 'id'>).reply;
    if (reply.ok) return reply.links;
    if (reply.refused) throw new ArchiveRefused(reply.message);
    throw Object.assign(new Error(`Unpacking failed: ${reply.message}`), { code: reply.code });
  }

  close(): void {
    this.child.close();
  }
}

const CHILD_FILE = path.join(__dirname, `unpack.child${path.extname(__filename)}`);
