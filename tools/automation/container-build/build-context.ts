/**
 * The build context: the files under a workspace folder, less what its .dockerignore excludes, as
 * the tar stream the engine reads. Only .dockerignore decides, as for `docker build`: `.git` and
 * `node_modules` are sent unless it names them. Paths are sandbox-checked by the workspace (no
 * `..`, no symlinks out of it); a symlink is sent as a link, as `docker build` sends it, and never
 * read through; the context is bounded in files and bytes.
 */
import dockerignore from '@balena/dockerignore';
import { constants as fsConstants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { pack, type Header, type Pack } from 'tar-stream';
import { ToolError, type ToolContext } from '@tos/sdk';

const MAX_FILES = 20_000;
const MAX_BYTES = 256 * 1024 * 1024;
const MAX_IGNORE_BYTES = 64 * 1024;
const MAX_DOCKERFILE_BYTES = 1024 * 1024;
const IGNORE_FILE = '.dockerignore';

export interface BuildContext {
  tar: Readable;
  files: number;
  bytes: number;
  /** The Dockerfile's text, read to find what the engine will fetch. */
  dockerfile: string;
}

export async function buildContext(ctx: ToolContext, folder: string, dockerfile: string): Promise<BuildContext> {
  const root = await ctx.workspace.resolve(folder, 'context');
  const prefix = folder === '.' || folder === '' ? '' : `${path.posix.normalize(folder).replace(/\/+$/, '')}/`;
  const excluded = await ignoreRules(ctx, root, prefix, dockerfile);
  const listed = await ctx.workspace.listFiles(folder, { maxFiles: MAX_FILES, exclude: (file, kind) => excluded(file.slice(prefix.length), kind) }, 'context');
  const kept = listed.map((file) => ({ ...file, name: file.path.slice(prefix.length) }));
  if (!kept.some(({ name }) => name === dockerfile)) throw ToolError.invalidInput('dockerfile', `a file inside the context folder '${folder}'`, dockerfile, `No Dockerfile '${dockerfile}' in the context folder '${folder}'`);
  const text = await ctx.workspace.readText(`${prefix}${dockerfile}`, MAX_DOCKERFILE_BYTES, 'dockerfile');
  const bytes = kept.reduce((sum, { size }) => sum + size, 0);
  if (bytes > MAX_BYTES) throw tooLarge(bytes);
  const tar = pack();
  void (async () => {
    let sent = 0;
    for (const file of kept) sent = await addEntry(tar, path.join(root, file.name), file.name, sent);
    tar.finalize();
  })().catch((err: Error) => tar.destroy(err));
  return { tar: tar as unknown as Readable, files: kept.length, bytes, dockerfile: text };
}

/**
 * What .dockerignore leaves out, by path inside the context. The Dockerfile and .dockerignore are
 * sent even when ignored, as `docker build` sends them. A directory it ignores is not walked at all
 * unless an exception (`!pattern`) could bring back something inside it.
 */
async function ignoreRules(ctx: ToolContext, root: string, prefix: string, dockerfile: string): Promise<(name: string, kind: 'file' | 'directory') => boolean> {
  const present = await fs.lstat(path.join(root, IGNORE_FILE)).then(
    () => true,
    () => false,
  );
  if (!present) return () => false;
  const lines = (await ctx.workspace.readText(`${prefix}${IGNORE_FILE}`, MAX_IGNORE_BYTES, 'context')).split(/\r?\n/);
  const ignore = dockerignore({ ignorecase: false }).add(lines);
  const exceptions = lines.some((line) => line.trim().startsWith('!'));
  return (name, kind) => {
    if (kind === 'directory') return !exceptions && ignore.ignores(name);
    return name !== dockerfile && name !== IGNORE_FILE && ignore.ignores(name);
  };
}

/**
 * Packs one listed file and returns the bytes sent so far. A symlink becomes a link entry; anything
 * else is opened without following a link (a file swapped for one since the listing is refused) and
 * sent as the regular file it still is, within the byte bound as it is now.
 */
async function addEntry(tar: Pack, absolute: string, name: string, sent: number): Promise<number> {
  const link = await fs.lstat(absolute);
  if (link.isSymbolicLink()) {
    await packed(tar, { name, type: 'symlink', linkname: await fs.readlink(absolute), mode: link.mode & 0o777, mtime: link.mtime });
    return sent;
  }
  const handle = await fs.open(absolute, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  try {
    const { mode, mtime, size } = await handle.stat();
    if ((mode & fsConstants.S_IFMT) !== fsConstants.S_IFREG) throw new ToolError(`The context file ${name} changed while it was sent: it is no longer a regular file`);
    if (sent + size > MAX_BYTES) throw tooLarge(sent + size);
    // Exactly the bytes the header announces, should the file grow meanwhile.
    await packed(tar, { name, size, mode: mode & 0o777, mtime }, size === 0 ? undefined : handle.createReadStream({ autoClose: false, start: 0, end: size - 1 }));
    return sent + size;
  } finally {
    await handle.close();
  }
}

/** Adds an entry and waits until it is packed: a link's header alone, or a file's body (none when empty). */
function packed(tar: Pack, header: Partial<Header> & Pick<Header, 'name'>, body?: Readable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = (err?: Error | null) => (err ? reject(err) : resolve());
    if (header.type === 'symlink') tar.entry(header, done);
    else if (body === undefined) tar.entry(header, '', done);
    else body.on('error', reject).pipe(tar.entry(header, done));
  });
}

function tooLarge(bytes: number): ToolError {
  return ToolError.invalidInput('context', `a build context of at most ${MAX_BYTES / 1024 / 1024} MiB (add a .dockerignore)`, `${Math.ceil(bytes / 1024 / 1024)} MiB`);
}
