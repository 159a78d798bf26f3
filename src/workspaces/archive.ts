/**
 * Reading an uploaded workspace archive (.tar.gz or .zip) entry by entry, streaming, with every
 * refusal a hostile archive calls for: absolute paths, `..`, links that leave the tree (judged by
 * TreeShape on the finished tree, never lexically), entries beneath links, hard links, devices and
 * FIFOs, too many files, and too many bytes — every decompressed byte counted as it streams, and a
 * tar read only up to its end-of-archive marker, so a bomb or a padded stream stops at the limit
 * without the memory ever holding more than one chunk.
 */
import { createReadStream } from 'node:fs';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract as tarExtract } from 'tar-stream';
import type * as yauzl from 'yauzl';
import { ArchiveRefused, printable, TreeShape } from './tree-shape';
import { nextEntry, openEntry } from '../common/zip-entries';

export { ArchiveRefused } from './tree-shape';

/** An archive in memory, or in a file read as a stream (a commit's tree from `git archive`). */
export type ArchiveSource = Buffer | { file: string };

/** What an upload may be; plain `tar` is what `git archive` gives the workspaces themselves. */
export type ArchiveFormat = 'tar.gz' | 'zip' | 'tar';

export interface ArchiveLimits {
  maxFiles: number;
  maxBytes: number;
}

export type ArchiveEntry = { kind: 'file'; path: string; content: Readable } | { kind: 'symlink'; path: string; target: string } | { kind: 'folder'; path: string };

/** What a sink does with each entry; the file content must be consumed. */
export type EntrySink = (entry: ArchiveEntry) => Promise<void>;

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFREG = 0o100000;
const MAX_LINK_TARGET = 4096;

/** Tar's own bytes beside the files' (a header per entry, padding to 512-byte blocks) that the decompressed stream may hold. */
const TAR_BYTES_PER_ENTRY = 1536;
const TAR_BLOCK = 512;

/**
 * Reads every entry into `sink`, links last-judged: the sink sees a link before the whole tree is
 * known, so it must not follow or create links until this resolves (the unpacker creates them after).
 */
export async function readArchive(data: ArchiveSource, format: ArchiveFormat, limits: ArchiveLimits, sink: EntrySink): Promise<{ files: number; bytes: number }> {
  const budget = new Budget(limits);
  const shape = new TreeShape();
  const shaped: EntrySink = async (entry) => {
    shape.add(entry.path, entry.kind === 'symlink' ? 'link' : entry.kind, entry.kind === 'symlink' ? entry.target : undefined);
    await sink(entry).catch((error: unknown) => {
      throw error instanceof ArchiveRefused ? error : new SinkFailed('the sink failed', { cause: error });
    });
  };
  if (format === 'zip') await readZip(data, budget, shaped);
  else await readTar(data, format === 'tar.gz', budget, shaped);
  if (budget.files === 0) throw new ArchiveRefused('The archive holds no files');
  shape.checkLinks();
  return { files: budget.files, bytes: budget.bytes };
}

/** Counts files and unpacked bytes across the archive; throws at the first limit passed. */
class Budget {
  files = 0;
  bytes = 0;
  private inflated = 0;
  constructor(private readonly limits: ArchiveLimits) {}

  /** Counts a decompressed tar chunk: files' bytes plus tar's own headers and padding. */
  decompressed(size: number): void {
    this.inflated += size;
    const allowed = this.limits.maxBytes + TAR_BYTES_PER_ENTRY * this.limits.maxFiles;
    if (this.inflated > allowed) throw new ArchiveRefused(`More than ${allowed} bytes decompressed (WORKSPACE_MAX_UNPACKED_BYTES and ${TAR_BYTES_PER_ENTRY} bytes per file of WORKSPACE_MAX_FILES)`);
  }

  file(): void {
    this.files += 1;
    if (this.files > this.limits.maxFiles) throw new ArchiveRefused(`More than ${this.limits.maxFiles} files (WORKSPACE_MAX_FILES)`);
  }

  /** Hands a file entry to the sink through a meter that counts its bytes and fails past the limit. */
  async passFile(at: string, content: AsyncIterable<unknown>, sink: EntrySink): Promise<void> {
    this.file();
    const meter = new Transform({
      transform: (chunk: Buffer, _encoding, done: TransformCallback) => {
        this.bytes += chunk.length;
        if (this.bytes > this.limits.maxBytes) done(new ArchiveRefused(`More than ${this.limits.maxBytes} bytes unpacked (WORKSPACE_MAX_UNPACKED_BYTES)`));
        else done(null, chunk);
      },
    });
    await Promise.all([pipeline(content, meter), sink({ kind: 'file', path: at, content: meter })]);
  }
}

/** The entry's path made relative and checked: no absolute path, no `..`, no NUL or backslash. */
function entryPath(name: string): string {
  if (name.includes('\0') || name.includes('\\')) throw new ArchiveRefused(`Entry '${printable(name)}' has a NUL or backslash in its name`);
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) throw new ArchiveRefused(`Entry '${printable(name)}' has an absolute path`);
  const parts = name.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) throw new ArchiveRefused(`Entry '${printable(name)}' climbs out of the workspace (..)`);
  return parts.join('/');
}

async function readTar(data: ArchiveSource, gzipped: boolean, budget: Budget, sink: EntrySink): Promise<void> {
  const extract = tarExtract();
  const format = gzipped ? '.tar.gz' : '.tar';
  const bytes = Buffer.isBuffer(data) ? Readable.from([data]) : createReadStream(data.file);
  const stream = gzipped ? bytes.pipe(createGunzip()) : bytes;
  const done = pipeline(untilEndOfArchive(stream, budget), extract).catch((error: Error) => {
    throw unreadable(error, format);
  });
  try {
    for await (const entry of extract) {
      const { name, type, linkname } = entry.header;
      const at = entryPath(name);
      if (type === 'directory') {
        entry.resume();
        if (at !== '') await sink({ kind: 'folder', path: at });
        continue;
      }
      if (type === 'file' || type === 'contiguous-file') {
        await budget.passFile(at, entry, sink);
      } else if (type === 'symlink') {
        budget.file();
        entry.resume();
        await sink({ kind: 'symlink', path: at, target: linkname ?? '' });
      } else {
        entry.resume();
        throw new ArchiveRefused(`Entry '${printable(at)}' is a ${type}: only files, directories and links inside the tree are accepted`);
      }
    }
  } catch (error) {
    extract.destroy();
    await done.catch(() => undefined);
    throw unreadable(error, format);
  }
  await done;
}

/**
 * The tar stream up to its end-of-archive marker (two zero blocks where a header is due), every
 * byte counted against the budget; what follows the marker is never decompressed (a few hundred
 * bytes of gzip can hold gigabytes of padding that tar readers would otherwise read to the end).
 */
async function* untilEndOfArchive(stream: Readable, budget: Budget): AsyncGenerator<Buffer> {
  let skip = 0; // bytes of the current entry's data (and padding) before the next header
  let header: Buffer[] = [];
  let headerBytes = 0;
  let zeroBlocks = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    budget.decompressed(chunk.length);
    let at = 0;
    while (at < chunk.length) {
      if (skip > 0) {
        const passed = Math.min(skip, chunk.length - at);
        skip -= passed;
        at += passed;
        continue;
      }
      const taken = Math.min(TAR_BLOCK - headerBytes, chunk.length - at);
      header.push(chunk.subarray(at, at + taken));
      headerBytes += taken;
      at += taken;
      if (headerBytes < TAR_BLOCK) break;
      const block = Buffer.concat(header);
      header = [];
      headerBytes = 0;
      if (block.every((byte) => byte === 0)) {
        zeroBlocks += 1;
        if (zeroBlocks === 2) {
          yield chunk.subarray(0, at);
          return; // leaving the loop destroys the stream: the rest is never inflated
        }
      } else {
        zeroBlocks = 0;
        skip = Math.ceil(entrySize(block) / TAR_BLOCK) * TAR_BLOCK;
      }
    }
    yield chunk;
  }
}

/** A tar header's size field: octal text, or base-256 when its first byte has the high bit set. */
function entrySize(block: Buffer): number {
  const field = block.subarray(124, 136);
  if (field[0] & 0x80) return field.subarray(1).reduce((size, byte) => size * 256 + byte, field[0] & 0x7f);
  const size = Number.parseInt(field.toString('latin1').replace(/[\0 ]+/g, ' ').trim() || '0', 8);
  return Number.isFinite(size) ? size : 0;
}

/** A refusal as it is; any other failure of the readers means the bytes are not that format. */
function unreadable(error: unknown, format: string): unknown {
  if (error instanceof SinkFailed) return error.cause;
  return error instanceof ArchiveRefused ? error : new ArchiveRefused(`Not a readable ${format}: ${(error as Error).message}`);
}

/** The sink's own failure (a write refused, a full disk): passed on as it is, not blamed on the archive. */
class SinkFailed extends Error {}

async function readZip(data: ArchiveSource, budget: Budget, sink: EntrySink): Promise<void> {
  // The zip reader loads with the first .zip upload, not at start-up.
  const { fromBuffer, open } = await import('yauzl');
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => {
    const options = { lazyEntries: true, validateEntrySizes: true, strictFileNames: true };
    const opened = (error: Error | null, file: yauzl.ZipFile) => (error ? reject(unreadable(error, '.zip')) : resolve(file));
    if (Buffer.isBuffer(data)) fromBuffer(data, options, opened);
    else open(data.file, options, opened);
  });
  try {
    for (let entry = await nextEntry(zip); entry; entry = await nextEntry(zip)) {
      const at = entryPath(entry.fileName);
      if (entry.fileName.endsWith('/')) {
        if (at !== '') await sink({ kind: 'folder', path: at });
        continue;
      }
      const mode = (entry.externalFileAttributes >>> 16) & S_IFMT;
      if (mode !== 0 && mode !== S_IFREG && mode !== S_IFLNK) throw new ArchiveRefused(`Entry '${printable(at)}' is a special file: only files, directories and links inside the tree are accepted`);
      const content = await openEntry(zip, entry);
      if (mode === S_IFLNK) {
        budget.file();
        const target = (await readSmall(content, MAX_LINK_TARGET)).toString('utf8');
        await sink({ kind: 'symlink', path: at, target });
        continue;
      }
      await budget.passFile(at, content, sink);
    }
  } catch (error) {
    throw unreadable(error, '.zip');
  } finally {
    zip.close();
  }
}

async function readSmall(stream: Readable, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) throw new ArchiveRefused(`A link target longer than ${max} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
