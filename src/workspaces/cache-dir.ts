import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type { AppConfig } from '../config/app-config';

/**
 * This service's folder under WORKSPACE_CACHE_DIR: one per database. A sweeper removes the unpacked
 * trees its own database's workspaces no longer name, so services on different databases sharing the
 * directory (the default is one per machine) must not see each other's trees, or one would delete
 * what the other is reading.
 */
export function workspaceCacheDir(config: AppConfig): string {
  return path.join(config.WORKSPACE_CACHE_DIR, `db-${createHash('sha256').update(databaseIdentity(config)).digest('hex').slice(0, 16)}-${TREE_LAYOUT}`);
}

/**
 * Trees unpacked when links were still judged on the finished tree may hold what those
 * checks refuse, or files another archive planted in them: a new layout name means they are never
 * opened again (they are left for the operator to delete, like any tmp folder).
 */
const TREE_LAYOUT = 'v2';

function databaseIdentity(config: AppConfig): string {
  if (!config.DATABASE_URL) return `embedded:${path.resolve(config.DATA_DIR)}`;
  const url = new URL(config.DATABASE_URL);
  url.password = ''; // the same database whatever the credentials; and no secret in what we hash
  return url.toString();
}
