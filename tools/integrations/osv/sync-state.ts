/**
 * The record `tos advisories sync` keeps beside the ecosystem folders of an OSV_DATA_DIR
 * (`<dir>/.osv-sync.json`, outside every record folder): per ecosystem, which export was
 * unpacked and how fresh it is. The scanners read it to say which data they used (docs/tools.md).
 */
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';

export const SYNC_STATE_FILE = '.osv-sync.json';

export interface EcosystemSync {
  /** The export downloaded (`<source>/<Ecosystem>/all.zip`). */
  url: string;
  etag: string | null;
  last_modified: string | null;
  /** When the folder was last confirmed current (downloaded, or answered 304). */
  synced_at: string;
  records: number;
  /** The newest `modified` among the records: how current the data is, whenever it was synced. */
  newest_record: string | null;
}

/** A download cut short: kept so the next sync continues it with a Range request. */
export interface PartialDownload {
  url: string;
  etag: string;
}

export interface SyncState {
  ecosystems: Record<string, EcosystemSync>;
  partial: Record<string, PartialDownload>;
}

export function syncStatePath(directory: string): string {
  return path.join(directory, SYNC_STATE_FILE);
}

/** The state of `directory`, empty when it was never synced (or the file is not ours). */
export async function readSyncState(directory: string): Promise<SyncState> {
  try {
    const parsed = JSON.parse(await readFile(syncStatePath(directory), 'utf8')) as Partial<SyncState>;
    return { ecosystems: isObject(parsed.ecosystems) ? parsed.ecosystems : {}, partial: isObject(parsed.partial) ? parsed.partial : {} };
  } catch {
    return { ecosystems: {}, partial: {} };
  }
}

function isObject<T>(value: T | undefined): value is T {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
