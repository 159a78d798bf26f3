/**
 * This process's unpacked trees: one folder per name under WORKSPACE_CACHE_DIR, filled from an
 * archive once (staged in a temporary folder and renamed, so a reader never sees half a tree), with
 * concurrent openings of the same name sharing one unpack.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, stat, symlink } from 'node:fs/promises';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { readArchive, type ArchiveFormat, type ArchiveLimits } from './archive';

export interface TreeSource {
  archive: Buffer;
  format: ArchiveFormat;
}

export class TreeCache {
  private readonly unpacking = new Map<string, Promise<string>>();

  constructor(
    readonly dir: string,
    private readonly limits: ArchiveLimits,
  ) {}

  /** The folder of `name`, unpacked from what `load` gives when this process has not got it yet. */
  async open(name: string, load: () => Promise<TreeSource>): Promise<string> {
    const folder = path.join(this.dir, name);
    if (await stat(folder).then(() => true, () => false)) return folder;
    let pending = this.unpacking.get(name);
    if (!pending) {
      pending = load().then((source) => this.unpack(source, folder)).finally(() => this.unpacking.delete(name));
      this.unpacking.set(name, pending);
    }
    return pending;
  }

  private async unpack({ archive, format }: TreeSource, folder: string): Promise<string> {
    await mkdir(this.dir, { recursive: true });
    const staging = await mkdtemp(path.join(this.dir, '.unpacking-'));
    try {
      await readArchive(archive, format, this.limits, async (entry) => {
        const target = path.join(staging, entry.path);
        await mkdir(path.dirname(target), { recursive: true });
        if (entry.kind === 'symlink') await symlink(entry.target, target);
        else await pipeline(entry.content, createWriteStream(target, { mode: 0o644, flags: 'wx' }));
      });
      await rename(staging, folder).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
        await rm(staging, { recursive: true, force: true }); // another process unpacked it first
      });
      return folder;
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      throw error;
    }
  }
}
