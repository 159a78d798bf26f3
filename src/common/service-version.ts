import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

/** The nearest package.json above this file: the repository's, from src/ (ts-node) and dist/src/ (built) alike. */
function readServiceVersion(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  }
  return 'unknown';
}

/** The service's own version, as its package.json says. */
export const SERVICE_VERSION = readServiceVersion();
