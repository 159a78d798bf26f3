/**
 * The shape of an archive's tree as its entries arrive, judged the way the file system will see it
 * once unpacked — not lexically, entry by entry. Lexical checks once let a chain of links through:
 * `a/up -> ..` (the root, lexically fine) then `a/up/e -> ../..` (also the root from `a/up`, but
 * on disk `up` already points at the root, so `e` points above it) then `a/up/e/tmp/x` (a file
 * written through both links, anywhere on the host). So here:
 * - no entry may sit beneath a link (or a file): nothing is ever created through a link;
 * - no path appears twice (a later entry would replace what an earlier one was judged as);
 * - every link is judged last, by where it really points in the finished tree, following the
 *   other links as the kernel would, and refused when that leaves the tree.
 */
import * as path from 'node:path';

/** A refused archive: the message says which entry and why (it becomes INVALID_INPUT). */
export class ArchiveRefused extends Error {}

type Kind = 'folder' | 'file' | 'link';

/** As Linux: at most 40 links followed while resolving one path. */
const MAX_LINK_HOPS = 40;

export const printable = (text: string) => text.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);

export class TreeShape {
  private readonly kinds = new Map<string, Kind>();
  private readonly links = new Map<string, string>();

  /** Records an entry (a relative path without `.`, `..` or empty parts), refusing what would be created through a link. */
  add(at: string, kind: Kind, target?: string): void {
    if (at === '') throw new ArchiveRefused(`A ${kind} entry has no name (it would be the workspace's root)`);
    const parts = at.split('/');
    for (let depth = 1; depth < parts.length; depth += 1) {
      const parent = parts.slice(0, depth).join('/');
      const parentKind = this.kinds.get(parent);
      if (parentKind === 'link') throw new ArchiveRefused(`Entry '${printable(at)}' would be written through the link '${printable(parent)}'`);
      if (parentKind === 'file') throw new ArchiveRefused(`Entry '${printable(at)}' sits beneath the file '${printable(parent)}'`);
      if (!parentKind) this.kinds.set(parent, 'folder');
    }
    const earlier = this.kinds.get(at);
    if (earlier === 'link' && kind === 'folder') throw new ArchiveRefused(`Folder '${printable(at)}' would be made through the link of the same name`);
    if (earlier && !(earlier === 'folder' && kind === 'folder')) throw new ArchiveRefused(`Entry '${printable(at)}' appears twice in the archive`);
    this.kinds.set(at, kind);
    if (kind === 'link') {
      if (target === undefined || target === '' || target.includes('\0')) throw new ArchiveRefused(`Link '${printable(at)}' has no target`);
      if (target.startsWith('/')) throw new ArchiveRefused(`Link '${printable(at)}' points out of the workspace (${printable(target)})`);
      this.links.set(at, target);
    }
  }

  /** Judges every link by where it points in the finished tree; call once every entry is in. */
  checkLinks(): void {
    for (const [at, target] of this.links) {
      const hops = { left: MAX_LINK_HOPS };
      if (this.resolve(path.posix.dirname(at), target, hops) === undefined) throw new ArchiveRefused(`Link '${printable(at)}' points out of the workspace (${printable(target)})`);
    }
  }

  /**
   * Where `target`, read from the folder `from`, leads: the parts of a path inside the tree, or
   * undefined when it leaves it. Links met on the way are followed; `..` after a link climbs from
   * where the link really led, as on disk.
   */
  private resolve(from: string, target: string, hops: { left: number }): string[] | undefined {
    const at = from === '.' ? [] : from.split('/');
    for (const part of target.split('/')) {
      if (part === '' || part === '.') continue;
      if (part === '..') {
        if (at.length === 0) return undefined;
        at.pop();
        continue;
      }
      at.push(part);
      const link = this.links.get(at.join('/'));
      if (link === undefined) continue;
      hops.left -= 1;
      if (hops.left < 0) throw new ArchiveRefused(`Link '${printable(at.join('/'))}' is part of a loop of links (over ${MAX_LINK_HOPS} followed)`);
      at.pop();
      const led = this.resolve(at.join('/') || '.', link, hops);
      if (led === undefined) return undefined;
      at.splice(0, at.length, ...led);
    }
    return at;
  }
}
