/**
 * This process's unpacked trees: one folder per name under WORKSPACE_CACHE_DIR, filled from an
 * archive once (staged in a temporary folder and renamed, so a reader never sees half a tree), with
 * concurrent openings of the same name sharing one unpack. Folders and files are written by the
 * confined unpacker; the links it reports, each judged against the finished tree, are made here
 * last, so no file is ever written through a link.
 */
import { mkdir, mkdtemp, realpath, rename, rm, stat, symlink } from 'node:fs/promises';
import * as path from 'node:path';
import { ArchiveRefused, type ArchiveFormat, type ArchiveLimits, type ArchiveSource } from './archive';
import { ConfinedUnpacker } from './unpacker';

export interface TreeSource {
  archive: ArchiveSource;
  format: ArchiveFormat;
}

export class TreeCache {
  private readonly unpacking = new Map<string, Promise<string>>();
  private readonly unpacker: ConfinedUnpacker;

  constructor(
    readonly dir: string,
    private readonly limits: ArchiveLimits,
  ) {
    this.unpacker = new ConfinedUnpacker(dir);
  }

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

  close(): void {
    this.unpacker.close();
  }

  private async unpack({ archive, format }: TreeSource, folder: string): Promise<string> {
    await mkdir(this.dir, { recursive: true });
    const staging = await mkdtemp(path.join(this.dir, '.unpacking-'));
    try {
      const links = await this.unpacker.unpack(archive, format, this.limits, staging);
      const stagingReal = await realpath(staging);
      for (const link of links) {
        const at = path.join(staging, link.path);
        // The unpacker made every folder and no link, so a link's folder is a real one inside staging.
        const folderOfLink = await realpath(path.dirname(at));
        if (folderOfLink !== stagingReal && !folderOfLink.startsWith(stagingReal + path.sep)) throw new ArchiveRefused(`Link '${link.path}' would be made outside the workspace`);
        await symlink(link.target, at);
      }
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
