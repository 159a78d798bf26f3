import { readFileSync } from 'node:fs';
import * as path from 'node:path';

/** The package's version, read from the package.json above this file (src/cli under ts-node, dist/src/cli when built). */
export function packageVersion(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    try {
      return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      // not here: one level up
    }
  }
  return 'unknown';
}
