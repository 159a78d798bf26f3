/**
 * The build context: the files under a workspace folder, less what its .dockerignore excludes, as
 * the tar stream the engine reads. Paths are sandbox-checked by the workspace (no `..`, no
 * symlinks out of it); the context is bounded in files and bytes.
 */
import dockerignore from '@balena/dockerignore';
import { createReadStream, promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { pack } from 'tar-stream';
import { ToolError, type ToolContext } from '@tos/sdk';

const MAX_FILES = 20_000;
const MAX_BYTES = 256 * 1024 * 1024;
const MAX_IGNORE_BYTES = 64 * 1024;
const MAX_DOCKERFILE_BYTES = 1024 * 1024;

export interface BuildContext {
  tar: Readable;
  files: number;
  bytes: number;
  /** The Dockerfile's text, read to find what the engine will fetch. */
  dockerfile: string;
}

export async function buildContext(ctx: ToolContext, folder: string, dockerfile: string): Promise<BuildContext> {
  const listed = await ctx.workspace.listFiles(folder, { maxFiles: MAX_FILES }, 'context');
  const root = await ctx.workspace.resolve(folder, 'context');
  const prefix = folder === '.' || folder === '' ? '' : `${path.posix.normalize(folder).replace(/\/+$/, '')}/`;
  const relative = listed.map((file) => ({ ...file, name: file.path.slice(prefix.length) }));
  const names = new Set(relative.map(({ name }) => name));
  if (!names.has(dockerfile)) throw ToolError.invalidInput('dockerfile', `a file inside the context folder '${folder}'`, dockerfile, `No Dockerfile '${dockerfile}' in the context folder '${folder}'`);
  const text = await ctx.workspace.readText(`${prefix}${dockerfile}`, MAX_DOCKERFILE_BYTES, 'dockerfile');
  const ignore = dockerignore({ ignorecase: false });
  if (names.has('.dockerignore')) ignore.add((await ctx.workspace.readText(`${prefix}.dockerignore`, MAX_IGNORE_BYTES, 'context')).split(/\r?\n/));
  // The engine needs the Dockerfile and .dockerignore even when ignored, as `docker build` sends them.
  const kept = relative.filter(({ name }) => name === dockerfile || name === '.dockerignore' || !ignore.ignores(name));
  const bytes = kept.reduce((sum, { size }) => sum + size, 0);
  if (bytes > MAX_BYTES) throw ToolError.invalidInput('context', `a build context of at most ${MAX_BYTES / 1024 / 1024} MiB (add a .dockerignore)`, `${Math.ceil(bytes / 1024 / 1024)} MiB`);
  const tar = pack();
  void (async () => {
    for (const file of kept) {
      const absolute = path.join(root, file.name);
      const { mode, mtime } = await fs.stat(absolute);
      await new Promise<void>((resolve, reject) => {
        const entry = tar.entry({ name: file.name, size: file.size, mode: mode & 0o777, mtime }, (err) => (err ? reject(err) : resolve()));
        createReadStream(absolute).on('error', reject).pipe(entry);
      });
    }
    tar.finalize();
  })().catch((err: Error) => tar.destroy(err));
  return { tar: tar as unknown as Readable, files: kept.length, bytes, dockerfile: text };
}
