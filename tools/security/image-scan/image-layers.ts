/**
 * A `docker save` archive (the engine's image export, or a tarball in the workspace) read as a
 * stream, once: of each layer it keeps only the files that say what is installed (package
 * databases, package manifests, os-release) and the whiteouts that delete lower files, then
 * `manifest.json` gives the layer order. Nothing else is held in memory.
 */
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';
import { ToolError } from '../../../src/tools/sdk';

/** Files an inventory reads, by path inside the image (no leading slash). */
const INVENTORY_FILES = [
  /^var\/lib\/dpkg\/status$/,
  /^var\/lib\/dpkg\/status\.d\/[^/]+$/,
  /^lib\/apk\/db\/installed$/,
  /^(etc|usr\/lib)\/os-release$/,
  /(^|\/)node_modules\/(@[^/]+\/)?[^/]+\/package\.json$/,
  /(^|\/)[^/]+\.dist-info\/METADATA$/,
];
const MAX_FILE_BYTES = 16 * 1024 * 1024;
const MAX_MANIFEST_BYTES = 1024 * 1024;
const MAX_FILES_KEPT = 50_000;

export interface LayerContents {
  /** Inventory files written by this layer. */
  files: Map<string, string>;
  /** Paths this layer deletes (`.wh.` files), and folders it makes opaque (`.wh..wh..opq`). */
  deleted: string[];
  opaque: string[];
}

export interface SavedImage {
  /** Layers, lowest first, with the digest of each (`sha256:…` of the layer tar, or its archive path). */
  layers: { id: string; contents: LayerContents }[];
  tags: string[];
  /** What could not be read (a layer format not understood, files over the size bound). */
  warnings: string[];
}

/** Reads a `docker save` stream; `limitBytes` bounds what is read in all. */
export async function readSavedImage(archive: Readable, limitBytes: number, signal: AbortSignal): Promise<SavedImage> {
  const layersByPath = new Map<string, LayerContents>();
  const warnings: string[] = [];
  let manifest: { Layers?: string[]; RepoTags?: string[] }[] | undefined;
  let read = 0;
  let kept = 0;
  const outer = extract();
  outer.on('entry', (header, stream, next) => {
    const done = (err?: unknown) => (err ? outer.destroy(err as Error) : next());
    if (header.name === 'manifest.json') {
      void text(stream, MAX_MANIFEST_BYTES).then((body) => {
        manifest = JSON.parse(body ?? '[]') as typeof manifest;
        done();
      }, done);
      return;
    }
    if (header.type !== 'file' || !(/\.tar$/.test(header.name) || /^blobs\//.test(header.name))) {
      stream.resume();
      stream.on('end', () => done());
      return;
    }
    void readLayer(stream, header.name, warnings, () => kept++ < MAX_FILES_KEPT).then((contents) => {
      if (contents) layersByPath.set(header.name, contents);
      done();
    }, done);
  });
  const meter = new PassThrough();
  meter.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > limitBytes) meter.destroy(ToolError.invalidInput('tarball', `an image archive of at most ${Math.round(limitBytes / 1024 / 1024)} MiB`, `over ${Math.round(limitBytes / 1024 / 1024)} MiB`));
  });
  try {
    await pipeline(archive, meter, outer, { signal });
  } catch (err) {
    if (signal.aborted || err instanceof ToolError) throw err;
    throw ToolError.invalidInput('tarball', 'a docker save archive (tar)', undefined, `The image archive cannot be read: ${(err as Error).message}`);
  }
  const entry = manifest?.[0];
  if (!entry?.Layers) throw ToolError.invalidInput('tarball', 'a docker save archive with a manifest.json', undefined, 'The image archive has no manifest.json listing its layers');
  const layers = entry.Layers.map((layerPath) => ({ id: layerId(layerPath), contents: layersByPath.get(layerPath) ?? { files: new Map(), deleted: [], opaque: [] } }));
  return { layers, tags: entry.RepoTags ?? [], warnings };
}

/** A layer tar (gzip-compressed or not): its inventory files and whiteouts; null when it is not a tar. */
async function readLayer(stream: AsyncIterable<unknown>, name: string, warnings: string[], mayKeep: () => boolean): Promise<LayerContents | null> {
  const contents: LayerContents = { files: new Map(), deleted: [], opaque: [] };
  const inner = extract();
  inner.on('entry', (header, file, next) => {
    const path = header.name.replace(/^\.?\/+/, '');
    const base = path.slice(path.lastIndexOf('/') + 1);
    const folder = path.slice(0, path.length - base.length);
    if (base === '.wh..wh..opq') contents.opaque.push(folder);
    else if (base.startsWith('.wh.')) contents.deleted.push(folder + base.slice(4));
    if (header.type !== 'file' || !INVENTORY_FILES.some((pattern) => pattern.test(path))) {
      file.resume();
      file.on('end', () => next());
      return;
    }
    void text(file, MAX_FILE_BYTES).then((body) => {
      if (body === null) warnings.push(`${path} in layer ${layerId(name)} is over ${MAX_FILE_BYTES / 1024 / 1024} MiB and was not read`);
      else if (mayKeep()) contents.files.set(path, body);
      next();
    }, next);
  });
  // Fed by hand so that a blob that is no tar (an OCI config) fails only its own parse: the
  // archive entry is still drained, and the archive goes on.
  const feed = new PassThrough();
  let gzipped: boolean | undefined;
  let failed = false;
  const parsed = new Promise<void>((resolve) => {
    inner.on('finish', resolve).on('error', () => {
      failed = true;
      resolve();
    });
  });
  for await (const chunk of stream) {
    if (gzipped === undefined) {
      gzipped = (chunk as Buffer)[0] === 0x1f && (chunk as Buffer)[1] === 0x8b;
      (gzipped ? feed.pipe(createGunzip().on('error', () => inner.destroy(new Error('not gzip')))) : feed).pipe(inner);
    }
    if (!failed && !feed.write(chunk)) await new Promise((resolve) => feed.once('drain', resolve).once('close', resolve));
  }
  feed.end();
  await parsed;
  return failed || gzipped === undefined ? null : contents;
}

/** A stream's text, or null (drained) when longer than `max`. */
async function text(stream: AsyncIterable<unknown>, max: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size <= max) chunks.push(chunk as Buffer);
  }
  return size > max ? null : Buffer.concat(chunks).toString('utf8');
}

/** `abc123…/layer.tar` or `blobs/sha256/abc123…` → `sha256:abc123…`. */
function layerId(path: string): string {
  const hex = /([0-9a-f]{64})/.exec(path)?.[1];
  return hex ? `sha256:${hex}` : path;
}
