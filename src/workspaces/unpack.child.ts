/**
 * The unpacking process (see ConfinedUnpacker): reads an archive and writes its folders and files
 * under the folder it is given. It runs under Node's permission model, writes allowed only in the
 * tree cache, so even a path that slipped past every check could not be written elsewhere. It makes
 * no links (the permission model forbids it anyway): it reports them, judged, for the service to make
 * once every file is written, so no file is ever written through one.
 */
import { constants as fs } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ArchiveRefused, readArchive } from './archive';
import type { ArchiveLink, UnpackRequest } from './unpacker';

/** Created only if absent, never through a link at its own name. */
const NEW_FILE = fs.O_WRONLY | fs.O_CREAT | fs.O_EXCL | fs.O_NOFOLLOW;

async function unpack({ archive, format, limits, into }: UnpackRequest): Promise<{ ok: true; files: number; links: ArchiveLink[] }> {
  const links: ArchiveLink[] = [];
  const counted = await readArchive(archive instanceof Uint8Array ? Buffer.from(archive.buffer, archive.byteOffset, archive.byteLength) : archive, format, limits, async (entry) => {
    const target = path.join(into, entry.path);
    if (entry.kind === 'folder') {
      await mkdir(target, { recursive: true });
      return;
    }
    await mkdir(path.dirname(target), { recursive: true });
    if (entry.kind === 'symlink') {
      links.push({ path: entry.path, target: entry.target });
      return;
    }
    const handle = await open(target, NEW_FILE, 0o644);
    await pipeline(entry.content, handle.createWriteStream());
  });
  return { ok: true, links, files: counted.files };
}

process.on('message', (request: UnpackRequest) => {
  void unpack(request).then(
    (done) => process.send!({ id: request.id, ...done }),
    (error: Error) => process.send!({ id: request.id, ok: false, refused: error instanceof ArchiveRefused, message: error.message, code: (error as NodeJS.ErrnoException).code }),
  );
});
