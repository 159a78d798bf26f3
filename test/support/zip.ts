/** Zip archives for tests, hostile ones included. */
import { ZipFile } from 'yazl';

export interface ZipFixtureEntry {
  name: string;
  body: string | Buffer;
  mode?: number;
  /** Stored as is (no deflate). */
  stored?: boolean;
}

/** A zip of the entries; `..` in a name is written as yazl refuses to, by patching a same-length placeholder. */
export async function zip(entries: ZipFixtureEntry[]): Promise<Buffer> {
  const file = new ZipFile();
  for (const entry of entries) file.addBuffer(Buffer.from(entry.body), entry.name.replaceAll('..', '__'), { mode: entry.mode ?? 0o100644, compress: !entry.stored });
  file.end();
  const chunks: Buffer[] = [];
  for await (const chunk of file.outputStream) chunks.push(chunk as Buffer);
  let text = Buffer.concat(chunks).toString('latin1');
  for (const entry of entries) text = text.replaceAll(entry.name.replaceAll('..', '__'), entry.name);
  return Buffer.from(text, 'latin1');
}
