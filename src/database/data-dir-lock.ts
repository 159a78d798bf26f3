import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { ConfigError } from '../config/app-config';
import { isAlive } from '../common/process-alive';

const held = new Set<string>();

/**
 * PGlite is one process's database: a second process opening the same directory would corrupt it.
 * Takes an exclusive pid lock on `dir`, released at exit; a lock left by a dead process is taken over.
 */
export function lockDataDir(dir: string): void {
  const lockFile = path.join(dir, 'tos.lock');
  if (held.has(lockFile)) return;
  mkdirSync(dir, { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      held.add(lockFile);
      process.once('exit', () => releaseDataDir(dir));
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(readFileSync(lockFile, 'utf8'));
      if (owner && owner !== process.pid && isAlive(owner)) {
        throw new ConfigError(`DATA_DIR ${dir} is in use by process ${owner}: stop it first, or set DATABASE_URL to share a PostgreSQL database`);
      }
      unlinkSync(lockFile);
    }
  }
}

export function releaseDataDir(dir: string): void {
  const lockFile = path.join(dir, 'tos.lock');
  if (!held.delete(lockFile)) return;
  try {
    unlinkSync(lockFile);
  } catch {
    // already gone
  }
}
