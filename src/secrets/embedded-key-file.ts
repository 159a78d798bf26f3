import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { AppConfig } from '../config/app-config';

/**
 * The embedded service's SECRETS_KEY when none is set: a file beside the data it opens, made on
 * first use (0600), as self-hosted tools commonly do. With PostgreSQL the key stays a setting:
 * every process of a deployment must hold the same one.
 */
export class EmbeddedKeyFile {
  readonly path: string;

  constructor(dataDir: string) {
    this.path = path.resolve(dataDir, 'secrets.key');
  }

  /** The file for a configuration that needs one: embedded, and no SECRETS_KEY. */
  static of(config: Pick<AppConfig, 'DATABASE_URL' | 'DATA_DIR' | 'SECRETS_KEY'>): EmbeddedKeyFile | null {
    return config.DATABASE_URL || config.SECRETS_KEY ? null : new EmbeddedKeyFile(config.DATA_DIR);
  }

  /** The key it holds, or undefined before its first use. */
  read(): string | undefined {
    try {
      return readFileSync(this.path, 'utf8').trim();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  /** Makes the file with a new random key (never replacing one), and answers the key it holds. */
  create(): string {
    try {
      writeFileSync(this.path, `${randomBytes(32).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    return this.read()!;
  }
}
