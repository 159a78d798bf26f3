import { pack, type Header } from 'tar-stream';

/** An entry to pack: a tar header (size is worked out) and, for a file, its body. */
export type TarEntry = Partial<Header> & { name: string; body?: string | Buffer };

/** The entries as a plain tar, as tar-stream packs them. */
export async function tar(entries: TarEntry[]): Promise<Buffer> {
  const archive = pack();
  for (const { body, ...header } of entries) archive.entry({ ...header, size: body === undefined ? 0 : Buffer.byteLength(body) }, body ?? '');
  archive.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of archive) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
