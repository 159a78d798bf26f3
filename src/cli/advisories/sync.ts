/**
 * `tos advisories sync`: mirror OSV's published exports into an OSV_DATA_DIR (docs/tools.md).
 * Each ecosystem's `all.zip` is downloaded (resumably) into `<dir>/.osv-sync.d/`, unpacked into a
 * new generation folder there, and `<dir>/<Ecosystem>` is then switched to it by renaming a link
 * over the old one: a scan sees the old records or the new ones, never half an update.
 */
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readlink, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { readSyncState, syncStatePath, type EcosystemSync, type PartialDownload, type SyncState } from '../../../tools/integrations/osv/sync-state';
import { downloadExport } from './export-download';
import { unpackExport, UNPACK_LIMITS, type UnpackLimits } from './export-unpack';

/** Downloads and generations, beside (never inside) the ecosystem folders the scanners read. */
const WORK_FOLDER = '.osv-sync.d';
/** An ecosystem as OSV names its export folders ("crates.io", "Rocky Linux"); release suffixes (Debian:12) share the base folder. */
const ECOSYSTEM_NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]*$/;

export interface SyncOptions {
  directory: string;
  ecosystems: string[];
  source: string;
  limits?: UnpackLimits;
}

export interface SyncOutcome {
  ecosystem: string;
  status: 'downloaded' | 'resumed' | 'unchanged' | 'failed';
  records: number | null;
  /** The newest record's `modified`: how current the advisories are. */
  data_as_of: string | null;
  synced_at: string | null;
  error?: string;
}

/** Syncs each ecosystem in turn; one failing does not stop the others. */
export async function syncAdvisories(options: SyncOptions): Promise<SyncOutcome[]> {
  const directory = path.resolve(options.directory);
  await mkdir(path.join(directory, WORK_FOLDER), { recursive: true });
  const outcomes: SyncOutcome[] = [];
  for (const ecosystem of options.ecosystems) {
    try {
      if (!ECOSYSTEM_NAME.test(ecosystem)) throw new Error(`"${ecosystem}" is not an OSV ecosystem name (a release suffix like Debian:12 is served by the Debian folder)`);
      outcomes.push(await syncEcosystem(directory, ecosystem, options));
    } catch (error) {
      outcomes.push({ ecosystem, status: 'failed', records: null, data_as_of: null, synced_at: null, error: (error as Error).message });
    }
  }
  return outcomes;
}

async function syncEcosystem(directory: string, ecosystem: string, options: SyncOptions): Promise<SyncOutcome> {
  const url = `${options.source.replace(/\/+$/, '')}/${encodeURIComponent(ecosystem)}/all.zip`;
  const work = path.join(directory, WORK_FOLDER);
  const archive = path.join(work, `${ecosystem}.zip`);
  const state = await readSyncState(directory);
  const known = state.ecosystems[ecosystem];
  const present = await stat(path.join(directory, ecosystem)).then((info) => info.isDirectory(), () => false);
  const download = await downloadExport({
    url,
    file: archive,
    currentEtag: present && known?.url === url ? known.etag : null,
    partial: state.partial[ecosystem],
    onStarted: (partial) => updateState(directory, (current) => setPartial(current, ecosystem, partial)),
  });
  const synced_at = new Date().toISOString();
  if (download.status === 'unchanged') {
    // A partial file the server no longer continues (416) is dropped with its state.
    await rm(archive, { force: true });
    await updateState(directory, (current) => {
      current.ecosystems[ecosystem] = { ...known!, synced_at };
      setPartial(current, ecosystem, undefined);
    });
    return { ecosystem, status: 'unchanged', records: known!.records, data_as_of: known!.newest_record, synced_at };
  }
  const generation = path.join(work, `${ecosystem}-${Date.now()}-${randomBytes(4).toString('hex')}`);
  await mkdir(generation);
  try {
    const unpacked = await unpackExport(archive, (await stat(archive)).size, generation, options.limits ?? UNPACK_LIMITS);
    await switchFolder(directory, ecosystem, generation);
    const record: EcosystemSync = { url, etag: download.etag, last_modified: download.lastModified, synced_at, records: unpacked.records, newest_record: unpacked.newestRecord };
    await updateState(directory, (current) => void (current.ecosystems[ecosystem] = record));
    return { ecosystem, status: download.status, records: unpacked.records, data_as_of: unpacked.newestRecord, synced_at };
  } catch (error) {
    await rm(generation, { recursive: true, force: true });
    throw error;
  } finally {
    // A complete archive (unpacked or refused) is not resumed; only a cut download is kept.
    await rm(archive, { force: true });
    await updateState(directory, (current) => setPartial(current, ecosystem, undefined));
  }
}

/** Points `<dir>/<ecosystem>` at the new generation with one rename, then removes the previous generation. */
async function switchFolder(directory: string, ecosystem: string, generation: string): Promise<void> {
  const folder = path.join(directory, ecosystem);
  const work = path.join(directory, WORK_FOLDER);
  const previous = await lstat(folder).catch(() => undefined);
  let retired: string | undefined;
  if (previous?.isSymbolicLink()) retired = path.resolve(directory, await readlink(folder));
  else if (previous) {
    // A folder filled by hand: moved aside once (a directory cannot be renamed over), then replaced.
    retired = `${generation}.replaced`;
    await rename(folder, retired);
  }
  const link = `${generation}.link`;
  await symlink(path.relative(directory, generation), link);
  await rename(link, folder);
  // Only what sync itself made is removed; a link the operator pointed elsewhere keeps its target.
  if (retired && path.dirname(retired) === work) await rm(retired, { recursive: true, force: true });
}

function setPartial(state: SyncState, ecosystem: string, partial: PartialDownload | undefined): void {
  if (partial) state.partial[ecosystem] = partial;
  else delete state.partial[ecosystem];
}

/** Read, change, write through a temporary file and a rename: a reader never sees a torn state file. */
async function updateState(directory: string, change: (state: SyncState) => void): Promise<void> {
  const state = await readSyncState(directory);
  change(state);
  const file = syncStatePath(directory);
  const temporary = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temporary, `${JSON.stringify(state, null, 2)}\n`);
  await rename(temporary, file);
}
