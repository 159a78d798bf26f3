/**
 * OSV records from a directory in the layout of OSV's bulk export: `<dir>/<Ecosystem>/<ID>.json`
 * (each ecosystem's `all.zip` unpacked into a folder of its name). Each ecosystem folder is read
 * once into an index by package name and kept while its modification time stays the same
 * (adding or removing a record changes it); rewriting a file in place needs a touch of the folder.
 */
import type { Dirent } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { ToolError } from '@tos/sdk';
import { asOsvRecord, type OsvRecord } from './record';

/** Record files are a few KiB; anything this big is not one. */
const MAX_RECORD_BYTES = 8 * 1024 * 1024;
/** Files read at once while indexing. */
const READ_CONCURRENCY = 32;

export interface EcosystemIndex {
  /** Records naming a package, by normalised package name. */
  byName: Map<string, OsvRecord[]>;
  records: number;
  /** Files that were not OSV records (bad JSON, no id), skipped. */
  unreadable: number;
  /** False when the directory has no folder for the ecosystem. */
  present: boolean;
}

const indexes = new Map<string, { stamp: number; index: Promise<EcosystemIndex> }>();

/** The index of one ecosystem's folder under `directory`, built on first use and cached. */
export async function ecosystemIndex(directory: string, ecosystem: string, normaliseName: (name: string) => string, signal: AbortSignal): Promise<EcosystemIndex> {
  await stat(directory).catch((error: NodeJS.ErrnoException) => {
    throw new ToolError(`OSV_DATA_DIR (${directory}) is not readable: ${error.code ?? error.message}`, {
      suggestion: 'Point OSV_DATA_DIR at a directory holding <Ecosystem>/<ID>.json OSV records, or set OSV_API_URL instead',
    });
  });
  const folder = path.join(directory, ecosystem.split(':')[0]);
  const info = await stat(folder).catch(() => undefined);
  if (!info?.isDirectory()) return { byName: new Map(), records: 0, unreadable: 0, present: false };
  const cached = indexes.get(folder);
  if (cached && cached.stamp === info.mtimeMs) return cached.index;
  const index = buildIndex(folder, normaliseName, signal);
  indexes.set(folder, { stamp: info.mtimeMs, index });
  // A cancelled or failed build is not kept for the next call.
  index.catch(() => indexes.get(folder)?.index === index && indexes.delete(folder));
  return index;
}

async function buildIndex(folder: string, normaliseName: (name: string) => string, signal: AbortSignal): Promise<EcosystemIndex> {
  const files = await recordFiles(folder);
  const byName = new Map<string, OsvRecord[]>();
  let unreadable = 0;
  for (let start = 0; start < files.length; start += READ_CONCURRENCY) {
    signal.throwIfAborted();
    const batch = await Promise.all(files.slice(start, start + READ_CONCURRENCY).map((file) => readRecord(file)));
    for (const record of batch) {
      if (!record) {
        unreadable += 1;
        continue;
      }
      const names = new Set((record.affected ?? []).flatMap((entry) => (entry.package ? [normaliseName(entry.package.name)] : [])));
      for (const name of names) {
        const list = byName.get(name);
        if (list) list.push(record);
        else byName.set(name, [record]);
      }
    }
  }
  return { byName, records: files.length - unreadable, unreadable, present: true };
}

async function recordFiles(folder: string): Promise<string[]> {
  const entries: Dirent[] = await readdir(folder, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.json'))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

/** The record without its long prose (details, references): the index keeps only what matching needs. */
async function readRecord(file: string): Promise<OsvRecord | undefined> {
  try {
    if ((await stat(file)).size > MAX_RECORD_BYTES) return undefined;
    const { id, modified, withdrawn, aliases, summary, severity, affected, database_specific } = asOsvRecord(JSON.parse(await readFile(file, 'utf8')), file);
    return { id, modified, withdrawn, aliases, summary, severity, affected, database_specific };
  } catch {
    return undefined;
  }
}
