/**
 * An OSV export (`all.zip`, a flat list of `<ID>.json` records) unpacked into a new, empty
 * folder, within bounds: entries, total bytes, bytes per record and the unpacked-to-packed ratio.
 * Anything but a flat record file (a path, a link, a special file, a duplicate) refuses the
 * whole archive, so nothing is written anywhere but inside the folder.
 */
import { open } from 'node:fs/promises';
import * as path from 'node:path';
import type * as yauzl from 'yauzl';
import { nextEntry, openEntry } from '../../common/zip-entries';

export interface UnpackLimits {
  entries: number;
  totalBytes: number;
  /** The local reader skips bigger records (tools/integrations/osv/local-database.ts). */
  entryBytes: number;
  /** Unpacked bytes per byte of archive. */
  ratio: number;
}

export const UNPACK_LIMITS: UnpackLimits = { entries: 2_000_000, totalBytes: 16 * 1024 ** 3, entryBytes: 8 * 1024 ** 2, ratio: 200 };

export interface Unpacked {
  records: number;
  /** The newest `modified` among the records. */
  newestRecord: string | null;
}

class ExportRefused extends Error {
  override name = 'ExportRefused';
}

const RECORD_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*\.json$/;
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;

export async function unpackExport(archive: string, archiveBytes: number, folder: string, limits: UnpackLimits = UNPACK_LIMITS): Promise<Unpacked> {
  const { open: openZip } = await import('yauzl');
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    openZip(archive, { lazyEntries: true, validateEntrySizes: true, strictFileNames: true }, (error, file) => (error ? reject(error) : resolve(file))),
  );
  try {
    if (zip.entryCount > limits.entries) throw new ExportRefused(`The export has ${zip.entryCount} entries, more than ${limits.entries}`);
    const budget = Math.min(limits.totalBytes, archiveBytes * limits.ratio);
    let total = 0;
    let records = 0;
    let newestRecord: string | null = null;
    for (let entry = await nextEntry(zip); entry; entry = await nextEntry(zip)) {
      const mode = (entry.externalFileAttributes >>> 16) & S_IFMT;
      if (!RECORD_NAME.test(entry.fileName) || (mode !== 0 && mode !== S_IFREG)) throw new ExportRefused(`Entry ${JSON.stringify(entry.fileName)} is not a flat <ID>.json record file`);
      if (entry.uncompressedSize > limits.entryBytes) throw new ExportRefused(`Entry ${entry.fileName} unpacks to ${entry.uncompressedSize} bytes, more than ${limits.entryBytes}`);
      total += entry.uncompressedSize;
      if (total > budget) throw new ExportRefused(`The export unpacks to more than ${budget} bytes (limits: ${limits.totalBytes} bytes, ${limits.ratio}× the archive)`);
      const content = await readEntry(zip, entry, limits.entryBytes);
      // 'wx': a fresh file only, never through an existing name or link.
      const file = await open(path.join(folder, entry.fileName), 'wx');
      await file.writeFile(content).finally(() => file.close());
      const modified = modifiedOf(content);
      records += 1;
      if (modified && (newestRecord === null || modified > newestRecord)) newestRecord = modified;
    }
    return { records, newestRecord };
  } finally {
    zip.close();
  }
}

function modifiedOf(content: Buffer): string | null {
  try {
    const record = JSON.parse(content.toString('utf8')) as { modified?: unknown };
    return typeof record.modified === 'string' ? new Date(record.modified).toISOString() : null;
  } catch {
    return null;
  }
}

async function readEntry(zip: yauzl.ZipFile, entry: yauzl.Entry, max: number): Promise<Buffer> {
  const stream = await openEntry(zip, entry);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) throw new ExportRefused(`Entry ${entry.fileName} unpacks past ${max} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
