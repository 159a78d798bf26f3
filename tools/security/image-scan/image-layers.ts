/**
 * A `docker save` archive (the engine's image export, or a tarball in the workspace) read as a
 * stream, once: of each layer it keeps only what the inventory needs — the packages each package
 * database or manifest lists (parsed as it is read, the file's text dropped), os-release's fields,
 * and the whiteouts that delete lower files — then `manifest.json` gives the layer order.
 *
 * A layer is caller data that may inflate a thousandfold: what the layers unpack to is counted
 * per layer and per image, and what is read into memory (inventory files, whiteout paths) per
 * image, each against a budget whose excess refuses the image with INVALID_INPUT naming it.
 */
import { PassThrough, Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';
import { ToolError } from '@tos/sdk';
import { summarise, type InventoryFile } from './inventory';

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

/** What one scan may read; each limit names the setting that raises it. */
export interface ScanLimits {
  /** The archive as read (compressed layers count as stored). */
  archiveBytes: number;
  /** What one layer unpacks to. */
  layerBytes: number;
  /** What all layers together unpack to. */
  unpackedBytes: number;
  /** Inventory files and whiteout paths read into memory, in all. */
  readBytes: number;
}

/** The settings behind each limit, named in a refusal. */
export const LIMIT_SETTINGS: Readonly<Record<keyof ScanLimits, string>> = {
  archiveBytes: 'IMAGE_SCAN_MAX_ARCHIVE_BYTES',
  layerBytes: 'IMAGE_SCAN_MAX_LAYER_BYTES',
  unpackedBytes: 'IMAGE_SCAN_MAX_UNPACKED_BYTES',
  readBytes: 'IMAGE_SCAN_MAX_READ_BYTES',
};

/** What passing each limit means, for the refusal's message. */
const LIMIT_PASSED: Readonly<Record<keyof ScanLimits, string>> = {
  archiveBytes: 'The image archive is larger than',
  layerBytes: 'A layer of the image unpacks to more than',
  unpackedBytes: 'The layers of the image unpack to more than',
  readBytes: 'The package databases, manifests and whiteouts of the image are more than',
};

export interface LayerContents {
  /** What each inventory file written by this layer lists. */
  files: Map<string, InventoryFile>;
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

/**
 * The limits of one scan as budgets that bytes are spent from. The first one passed is kept: it
 * is the scan's answer, whichever stream reports the breakage first.
 */
class Budgets {
  refusal: ToolError | null = null;
  private readonly used = { archiveBytes: 0, unpackedBytes: 0, readBytes: 0 };

  constructor(
    private readonly limits: ScanLimits,
    private readonly parameter: string,
  ) {}

  /** Counts `bytes` against `limit` (a layer's own total for layerBytes); the refusal when over, else null. */
  spend(limit: keyof ScanLimits, bytes: number, layerTotal = 0): ToolError | null {
    const used = limit === 'layerBytes' ? layerTotal : (this.used[limit] += bytes);
    if (used <= this.limits[limit]) return null;
    const size = mebibytes(this.limits[limit]);
    this.refusal ??= ToolError.invalidInput(this.parameter, `an image within ${LIMIT_SETTINGS[limit]} (${size})`, `over ${size}`, `${LIMIT_PASSED[limit]} ${size} (${LIMIT_SETTINGS[limit]})`);
    return this.refusal;
  }
}

/** Reads a `docker save` stream within `limits`; a refusal names `parameter` (the image or tarball input). */
export async function readSavedImage(archive: Readable, limits: ScanLimits, parameter: string, signal: AbortSignal): Promise<SavedImage> {
  const layersByPath = new Map<string, LayerContents>();
  const warnings: string[] = [];
  const budgets = new Budgets(limits, parameter);
  let manifest: { Layers?: string[]; RepoTags?: string[] }[] | undefined;
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
    let layerBytes = 0;
    const layer: LayerBudgets = {
      inflated: (bytes) => budgets.spend('layerBytes', bytes, (layerBytes += bytes)) ?? budgets.spend('unpackedBytes', bytes),
      read: (bytes) => budgets.spend('readBytes', bytes),
    };
    const mayKeep = () => {
      if (++kept === MAX_FILES_KEPT + 1) warnings.push(`The image has more than ${MAX_FILES_KEPT} package databases and manifests: the rest were not read`);
      return kept <= MAX_FILES_KEPT;
    };
    void readLayer(stream, header.name, warnings, layer, mayKeep).then((contents) => {
      if (contents) layersByPath.set(header.name, contents);
      done();
    }, done);
  });
  const meter = new PassThrough();
  meter.on('data', (chunk: Buffer) => {
    const refusal = budgets.spend('archiveBytes', chunk.length);
    if (refusal) meter.destroy(refusal);
  });
  try {
    await pipeline(archive, meter, outer, { signal });
  } catch (err) {
    if (signal.aborted) throw err;
    if (budgets.refusal) throw budgets.refusal;
    if (err instanceof ToolError) throw err;
    throw ToolError.invalidInput(parameter, 'a docker save archive (tar)', undefined, `The image archive cannot be read: ${(err as Error).message}`);
  }
  const entry = manifest?.[0];
  if (!entry?.Layers) throw ToolError.invalidInput(parameter, 'a docker save archive with a manifest.json', undefined, 'The image archive has no manifest.json listing its layers');
  const layers = entry.Layers.map((layerPath) => ({ id: layerId(layerPath), contents: layersByPath.get(layerPath) ?? { files: new Map(), deleted: [], opaque: [] } }));
  return { layers, tags: entry.RepoTags ?? [], warnings };
}

interface LayerBudgets {
  /** Bytes the layer's tar unpacked to (after gunzip). */
  inflated(bytes: number): ToolError | null;
  /** Bytes read into memory: inventory files, whiteout paths. */
  read(bytes: number): ToolError | null;
}

/** A layer tar (gzip-compressed or not): its inventory files and whiteouts; null when it is not a tar. */
async function readLayer(stream: AsyncIterable<unknown>, name: string, warnings: string[], budgets: LayerBudgets, mayKeep: () => boolean): Promise<LayerContents | null> {
  const contents: LayerContents = { files: new Map(), deleted: [], opaque: [] };
  const hardLinks: Array<[path: string, target: string]> = [];
  let refusal: ToolError | null = null;
  // Stops the parse without an error event (entry streams would raise it unheard); the loop
  // below throws the refusal, and destroying the feed wakes it if it waits for a drain.
  const refuse = (err: ToolError) => {
    refusal ??= err;
    inner.destroy();
    feed.destroy();
  };
  const inner = extract();
  const feed = new PassThrough();
  inner.on('entry', (header, file, next) => {
    const path = header.name.replace(/^\.?\/+/, '');
    const base = path.slice(path.lastIndexOf('/') + 1);
    const folder = path.slice(0, path.length - base.length);
    const whiteout = base === '.wh..wh..opq' ? folder : base.startsWith('.wh.') ? folder + base.slice(4) : null;
    if (whiteout !== null) {
      const over = budgets.read(whiteout.length);
      if (over) return refuse(over);
      (base === '.wh..wh..opq' ? contents.opaque : contents.deleted).push(whiteout);
    }
    const size = header.size ?? 0;
    const inventoryPath = INVENTORY_FILES.some((pattern) => pattern.test(path));
    // A hard link names an earlier entry of this layer: it lists what that file lists.
    if (inventoryPath && header.type === 'link' && header.linkname) hardLinks.push([path, header.linkname.replace(/^\.?\/+/, '')]);
    const wanted = header.type === 'file' && inventoryPath;
    if (wanted && size > MAX_FILE_BYTES) warnings.push(`${path} in layer ${layerId(name)} is over ${MAX_FILE_BYTES / 1024 / 1024} MiB and was not read`);
    if (!wanted || size > MAX_FILE_BYTES) {
      file.resume();
      file.on('end', () => next());
      return;
    }
    // Counted from the header before a byte is held: a refusal comes before the memory is spent.
    const over = budgets.read(size);
    if (over) return refuse(over);
    void text(file, MAX_FILE_BYTES).then((body) => {
      if (body !== null && mayKeep()) contents.files.set(path, summarise(path, body));
      next();
    }, next);
  });
  // Counts what the layer unpacks to, between the gunzip (if any) and the tar parse.
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      const over = budgets.inflated(chunk.length);
      if (over) {
        refuse(over);
        return callback();
      }
      callback(null, chunk);
    },
  });
  let gzipped: boolean | undefined;
  let failed = false;
  const parsed = new Promise<void>((resolve) => {
    inner.on('finish', resolve).on('close', resolve).on('error', () => {
      failed = true;
      resolve();
    });
  });
  // Fed by hand so that a blob that is no tar (an OCI config) fails only its own parse: the
  // archive entry is still drained, and the archive goes on.
  for await (const chunk of stream) {
    if (refusal) throw refusal;
    if (gzipped === undefined) {
      gzipped = (chunk as Buffer)[0] === 0x1f && (chunk as Buffer)[1] === 0x8b;
      (gzipped ? feed.pipe(createGunzip().on('error', () => inner.destroy(new Error('not gzip')))) : feed).pipe(meter).pipe(inner);
    }
    if (!failed && !feed.write(chunk)) await new Promise((resolve) => feed.once('drain', resolve).once('close', resolve));
  }
  if (refusal) throw refusal;
  feed.end();
  await parsed;
  if (refusal) throw refusal;
  if (failed || gzipped === undefined) return null;
  linkInventoryFiles(contents, hardLinks, name, warnings, mayKeep);
  return contents;
}

/**
 * Hard-linked package manifests (a layer stores a file once, then links its other paths to it; pnpm
 * installs that way) list what their target lists. A target the scan did not read (a package
 * store's file) leaves its links unlisted, said once per layer.
 */
function linkInventoryFiles(contents: LayerContents, hardLinks: Array<[path: string, target: string]>, name: string, warnings: string[], mayKeep: () => boolean): void {
  let unread = 0;
  for (const [path, target] of hardLinks) {
    const file = contents.files.get(target);
    if (file === undefined) unread++;
    else if (mayKeep()) contents.files.set(path, file);
  }
  if (unread > 0) warnings.push(`${unread} package manifest(s) in layer ${layerId(name)} are hard links to files the scan does not read: they are not listed`);
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

function mebibytes(bytes: number): string {
  return bytes >= 1024 ** 3 && bytes % 1024 ** 3 === 0 ? `${bytes / 1024 ** 3} GiB` : `${Math.round((bytes / 1024 / 1024) * 100) / 100} MiB`;
}

/** `abc123…/layer.tar` or `blobs/sha256/abc123…` → `sha256:abc123…`. */
function layerId(path: string): string {
  const hex = /([0-9a-f]{64})/.exec(path)?.[1];
  return hex ? `sha256:${hex}` : path;
}
