/**
 * Reading an uploaded workspace archive (.tar.gz or .zip) entry by entry, streaming, with every
 * refusal a hostile archive calls for: absolute paths, `..`, links that leave the tree, hard links,
 * devices and FIFOs, too many files, and too many unpacked bytes — counted as they stream, so a
 * gzip or zip bomb stops at the limit without the memory ever holding more than one chunk.
 */
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import * as path from 'node:path';
import { extract as tarExtract } from 'tar-stream';
import * as yauzl from 'yauzl';

/** What an upload may be; plain `tar` is what `git archive` gives the workspaces themselves. */
export type ArchiveFormat = 'tar.gz' | 'zip' | 'tar';

export interface ArchiveLimits {
  maxFiles: number;
  maxBytes: number;
}

export type ArchiveEntry = { kind: 'file'; path: string; content: Readable } | { kind: 'symlink'; path: string; target: string };

/** What a sink does with each entry; the file content must be consumed. */
export type EntrySink = (entry: ArchiveEntry) => Promise<void>;

/** A refused archive: the message says which entry and why (it becomes INVALID_INPUT). */
export class ArchiveRefused extends Error {}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFREG = 0o100000;
const MAX_LINK_TARGET = 4096;

export async function readArchive(data: Buffer, format: ArchiveFormat, limits: ArchiveLimits, sink: EntrySink): Promise<{ files: number; bytes: number }> {
  const budget = new Budget(limits);
  if (format === 'zip') await readZip(data, budget, sink);
  else await readTar(data, format === 'tar.gz', budget, sink);
  return { files: budget.files, bytes: budget.bytes };
}

/** Counts files and unpacked bytes across the archive; throws at the first limit passed. */
class Budget {
  files = 0;
  bytes = 0;
  constructor(private readonly limits: ArchiveLimits) {}

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

/** A symlink's target, checked to stay inside the tree from where the link sits. */
function linkTarget(at: string, target: string): string {
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(at), target));
  if (target.startsWith('/') || resolved === '..' || resolved.startsWith('../')) throw new ArchiveRefused(`Link '${printable(at)}' points out of the workspace (${printable(target)})`);
  return target;
}

const printable = (text: string) => text.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);

async function readTar(data: Buffer, gzipped: boolean, budget: Budget, sink: EntrySink): Promise<void> {
  const extract = tarExtract();
  const format = gzipped ? '.tar.gz' : '.tar';
  const done = (gzipped ? pipeline(Readable.from([data]), createGunzip(), extract) : pipeline(Readable.from([data]), extract)).catch((error: Error) => {
    throw unreadable(error, format);
  });
  try {
    for await (const entry of extract) {
      const { name, type, linkname } = entry.header;
      if (type === 'directory') {
        entry.resume();
        continue;
      }
      const at = entryPath(name);
      if (type === 'file' || type === 'contiguous-file') {
        await budget.passFile(at, entry, sink);
      } else if (type === 'symlink') {
        budget.file();
        entry.resume();
        await sink({ kind: 'symlink', path: at, target: linkTarget(at, linkname ?? '') });
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

/** A refusal as it is; any other failure of the readers means the bytes are not that format. */
function unreadable(error: unknown, format: string): ArchiveRefused {
  return error instanceof ArchiveRefused ? error : new ArchiveRefused(`Not a readable ${format}: ${(error as Error).message}`);
}

async function readZip(data: Buffer, budget: Budget, sink: EntrySink): Promise<void> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.fromBuffer(data, { lazyEntries: true, validateEntrySizes: true, strictFileNames: true }, (error, file) => (error ? reject(unreadable(error, '.zip')) : resolve(file))),
  );
  try {
    for (let entry = await nextEntry(zip); entry; entry = await nextEntry(zip)) {
      if (entry.fileName.endsWith('/')) continue;
      const at = entryPath(entry.fileName);
      const mode = (entry.externalFileAttributes >>> 16) & S_IFMT;
      if (mode !== 0 && mode !== S_IFREG && mode !== S_IFLNK) throw new ArchiveRefused(`Entry '${printable(at)}' is a special file: only files, directories and links inside the tree are accepted`);
      const content = await openEntry(zip, entry);
      if (mode === S_IFLNK) {
        budget.file();
        const target = (await readSmall(content, MAX_LINK_TARGET)).toString('utf8');
        await sink({ kind: 'symlink', path: at, target: linkTarget(at, target) });
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

function nextEntry(zip: yauzl.ZipFile): Promise<yauzl.Entry | undefined> {
  return new Promise((resolve, reject) => {
    const onEntry = (entry: yauzl.Entry) => settle(() => resolve(entry));
    const onEnd = () => settle(() => resolve(undefined));
    const onError = (error: Error) => settle(() => reject(error));
    const settle = (then: () => void) => {
      zip.off('entry', onEntry).off('end', onEnd).off('error', onError);
      then();
    };
    zip.on('entry', onEntry).on('end', onEnd).on('error', onError);
    zip.readEntry();
  });
}

function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (error, stream) => (error ? reject(error) : resolve(stream))));
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
