/**
 * `DATA_DIR/operator.json`, mode 0600: while the embedded service runs, where its operator endpoint
 * listens and the random token that opens it; after it stops, only the public URL it ran with
 * (console links made while it is down still point at it). Whoever can read the data directory
 * already owns the database, so the file gives no one more than they had.
 */
import { closeSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import * as path from 'node:path';

export interface OperatorFile {
  public_url: string;
  /** Present while the service runs. */
  pid?: number;
  url?: string;
  token?: string;
}

export const operatorFilePath = (dataDir: string): string => path.join(path.resolve(dataDir), 'operator.json');

/** Written whole and renamed into place, created at 0600: never readable by others, never half-written. */
export function writeOperatorFile(dataDir: string, content: OperatorFile): void {
  const file = operatorFilePath(dataDir);
  const temp = `${file}.${process.pid}.tmp`;
  const fd = openSync(temp, 'w', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(content)}\n`);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
}

export function readOperatorFile(dataDir: string): OperatorFile | undefined {
  try {
    const parsed = JSON.parse(readFileSync(operatorFilePath(dataDir), 'utf8')) as OperatorFile;
    return typeof parsed.public_url === 'string' ? parsed : undefined;
  } catch {
    return undefined;
  }
}
