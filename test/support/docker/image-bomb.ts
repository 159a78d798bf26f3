/**
 * `docker save` archives made in memory for image-scan's limits: a manifest and gzip layers of
 * files that inflate far beyond what is stored (runs of one byte). Only the compressed archive
 * is ever held; the inflated bytes are streamed through gzip.
 */
import { createGzip } from 'node:zlib';
import { createHash } from 'node:crypto';
import { pack } from 'tar-stream';

export interface BombFile {
  path: string;
  /** The file's start; padded with spaces to `size` (still valid JSON after a JSON start). */
  head?: string;
  size: number;
}

const CHUNK = Buffer.alloc(1024 * 1024, ' ');

/** A gzip layer tar holding `files`. */
export async function gzipLayer(files: readonly BombFile[]): Promise<Buffer> {
  const tar = pack();
  const gzip = createGzip();
  const out: Buffer[] = [];
  gzip.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve, reject) => gzip.on('end', resolve).on('error', reject));
  tar.pipe(gzip);
  for (const { path, head = '', size } of files) {
    const entry = tar.entry({ name: path, size });
    const start = Buffer.from(head);
    let left = size - start.length;
    if (!entry.write(start)) await new Promise<void>((resolve) => entry.once('drain', () => resolve()));
    while (left > 0) {
      const part = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
      left -= part.length;
      if (!entry.write(part)) await new Promise<void>((resolve) => entry.once('drain', () => resolve()));
    }
    await new Promise<void>((resolve, reject) => entry.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
  tar.finalize();
  await ended;
  return Buffer.concat(out);
}

/** A `docker save` archive (tar) of these layers, lowest first. */
export async function savedImage(layers: readonly Buffer[]): Promise<Buffer> {
  const names = layers.map((layer) => `${createHash('sha256').update(layer).digest('hex')}/layer.tar`);
  const tar = pack();
  const out: Buffer[] = [];
  tar.on('data', (chunk) => out.push(chunk as Buffer));
  const ended = new Promise<void>((resolve) => tar.on('end', () => resolve()));
  tar.entry({ name: 'manifest.json' }, JSON.stringify([{ Config: 'config.json', RepoTags: ['bomb:1'], Layers: names }]));
  layers.forEach((layer, index) => tar.entry({ name: names[index] }, layer));
  tar.finalize();
  await ended;
  return Buffer.concat(out);
}

/** The reported bomb: one layer whose `count` package.json files inflate to `size` bytes each. */
export async function packageJsonBomb(count = 60, size = 15 * 1024 * 1024): Promise<Buffer> {
  const files = Array.from({ length: count }, (_, index) => ({ path: `app/node_modules/pkg${index}/package.json`, head: `{"name":"pkg${index}","version":"1.0.0"}`, size }));
  return savedImage([await gzipLayer(files)]);
}
