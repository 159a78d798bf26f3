import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { tar, type TarEntry as Entry } from '../../test/support/tar';
import { readArchive, type ArchiveEntry } from './archive';

const LIMITS = { maxFiles: 100, maxBytes: 1024 * 1024 };
const link = (name: string, linkname: string): Entry => ({ name, type: 'symlink', linkname });

/** What the reader hands the sink, file contents drained. */
async function read(data: Buffer, format: 'tar' | 'tar.gz' = 'tar'): Promise<string[]> {
  const seen: string[] = [];
  await readArchive(data, format, LIMITS, async (entry: ArchiveEntry) => {
    if (entry.kind === 'file') for await (const _chunk of entry.content as Readable) void _chunk;
    seen.push(`${entry.kind} ${entry.path}`);
  });
  return seen;
}

describe('readArchive: links judged on the finished tree', () => {
  it('keeps links that stay inside, including ones through other links', async () => {
    expect(await read(await tar([{ name: 'src/a.js', body: 'x' }, link('current', 'src'), link('deep/up', '..'), link('again', 'deep/up/src/a.js')]))).toEqual([
      'file src/a.js',
      'symlink current',
      'symlink deep/up',
      'symlink again',
    ]);
  });

  it.each([
    ['an entry beneath a link', [link('a/up', '..'), { name: 'a/up/x', body: 'x' }], /'a\/up\/x' would be written through the link 'a\/up'/],
    ['a link beneath a link (a chain that once wrote outside the tree)', [link('d0/d1/up', '../..'), link('d0/d1/up/e', '../../..'), { name: 'd0/d1/up/e/tmp/x', body: 'x' }], /through the link 'd0\/d1\/up'/],
    ['a folder entry at a link', [link('a', 'b'), { name: 'a/', type: 'directory' }], /would be made through the link/],
    ['a link lexically inside but really above, through another link', [link('a/b/c/root', '../../..'), link('up', 'a/b/c/root/..')], /Link 'up' points out/],
    ['a link made harmful by a later link', [link('up', 'x/..'), link('x', 'a/b/c/root'), link('a/b/c/root', '../../..')], /Link 'up' points out/],
    ['an absolute link', [link('passwd', '/etc/passwd')], /points out/],
    ['a loop of links', [link('a', 'b'), link('b', 'a'), link('c', 'a/x')], /loop of links/],
    ['the same path twice', [{ name: 'a', body: 'x' }, link('a', 'b')], /appears twice/],
    ['an entry beneath a file', [{ name: 'a', body: 'x' }, { name: 'a/b', body: 'y' }], /beneath the file 'a'/],
    ['a file named as the root', [{ name: './', body: 'x', type: 'file' }], /has no name/],
  ])('refuses %s', async (_name, entries, message) => {
    await expect(read(await tar([{ name: 'keep', body: 'k' }, ...(entries as Entry[])]))).rejects.toThrow(message);
  });
});

describe('readArchive: what a compressed stream may cost', () => {
  it('stops at the end-of-archive marker: padding after it is never inflated', async () => {
    const padded = gzipSync(Buffer.concat([await tar([{ name: 'a', body: 'x' }]), Buffer.alloc(64 * 1024 * 1024)]), { level: 9 });
    expect(padded.length).toBeLessThan(100 * 1024);
    expect(await read(padded, 'tar.gz')).toEqual(['file a']);
  });

  it('refuses an archive with no files, padded or not', async () => {
    await expect(read(await tar([]))).rejects.toThrow('The archive holds no files');
    await expect(read(gzipSync(Buffer.concat([await tar([{ name: 'only/', type: 'directory' }]), Buffer.alloc(1024 * 1024)])), 'tar.gz')).rejects.toThrow('no files');
  });

  it('counts every decompressed byte, not only the files', async () => {
    // Two bytes of file behind 2 MiB of pax header: a count of file bytes alone would let it through.
    const heavy = gzipSync(await tar([{ name: 'a', body: 'xy', pax: { comment: 'c'.repeat(2 * 1024 * 1024) } }]));
    await expect(read(heavy, 'tar.gz')).rejects.toThrow(/More than \d+ bytes decompressed/);
  });
});
