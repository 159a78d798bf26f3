/**
 * One OSV export downloaded to a file, resumably (RFC 9110): a partial file continues with
 * `Range` guarded by `If-Range` on its strong ETag (a changed export answers 200 and the file
 * restarts from zero); a complete export already unpacked is asked with `If-None-Match`.
 */
import { createWriteStream } from 'node:fs';
import { stat, truncate } from 'node:fs/promises';
import * as http from 'node:http';
import type { IncomingMessage } from 'node:http';
import * as https from 'node:https';
import type { PartialDownload } from '../../../tools/integrations/osv/sync-state';

export type Download = { status: 'unchanged' } | { status: 'downloaded' | 'resumed'; etag: string | null; lastModified: string | null };

export interface DownloadRequest {
  url: string;
  /** Where the bytes go; kept between runs while a download is partial. */
  file: string;
  /** ETag of the export already unpacked, if any: an unchanged export is not sent again. */
  currentEtag: string | null;
  /** A download a previous run left partial. */
  partial: PartialDownload | undefined;
  /** Called once the answer's headers say what is being written. */
  onStarted: (partial: PartialDownload | undefined) => Promise<void>;
}

const IDLE_TIMEOUT_MS = 60_000;

/** Only a strong validator may guard a byte range (RFC 9110 §13.1.5). */
const isStrong = (etag: string | null | undefined): etag is string => typeof etag === 'string' && etag.startsWith('"');

export async function downloadExport(request: DownloadRequest): Promise<Download> {
  const size = await stat(request.file).then((info) => info.size, () => 0);
  const resumable = request.partial?.url === request.url && isStrong(request.partial.etag) && size > 0;
  const headers: Record<string, string> = { 'accept-encoding': 'identity' };
  if (resumable) Object.assign(headers, { range: `bytes=${size}-`, 'if-range': request.partial!.etag });
  else if (request.currentEtag) headers['if-none-match'] = request.currentEtag;
  const response = await get(request.url, headers);
  const status = response.statusCode ?? 0;
  const header = (name: string) => (typeof response.headers[name] === 'string' ? (response.headers[name] as string) : null);
  if (status !== 200 && status !== 206) response.resume();
  if (status === 304 && !resumable && request.currentEtag) return { status: 'unchanged' };
  const etag = header('etag');
  const offset = status === 206 ? resumedAt(header('content-range')) : 0;
  const continues = status === 206 && offset === size && (etag === null || etag === request.partial?.etag);
  if (resumable && (status === 416 || (status === 206 && !continues))) {
    // The server cannot continue this partial file (416, or a range of something else): start over.
    response.destroy();
    await truncate(request.file, 0);
    return downloadExport({ ...request, partial: undefined });
  }
  if (status !== 200 && !(status === 206 && continues)) throw new Error(`${request.url} answered HTTP ${status}`);
  // Saving starts at once (a cut seen before the listeners would be missed); the state follows.
  const saved = saveBody(response, request.file, status === 206 ? 'a' : 'w');
  const recorded = request.onStarted(isStrong(etag) ? { url: request.url, etag } : undefined);
  await Promise.allSettled([saved, recorded]);
  await recorded;
  await saved;
  const expected = Number(header('content-length') ?? NaN);
  const written = (await stat(request.file)).size - offset;
  if (Number.isFinite(expected) && written !== expected) throw new Error(`${request.url} ended after ${written} of ${expected} bytes`);
  return { status: status === 206 ? 'resumed' : 'downloaded', etag, lastModified: header('last-modified') };
}

function get(url: string, headers: Record<string, string>): Promise<IncomingMessage> {
  const client = new URL(url).protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.get(url, { headers }, resolve).once('error', reject);
    // A stalled connection fails the download (what arrived is kept for the next run).
    request.setTimeout(IDLE_TIMEOUT_MS, () => request.destroy(new Error(`${url} sent nothing for ${IDLE_TIMEOUT_MS / 1000} s`)));
  });
}

/**
 * The body written chunk by chunk as it arrives; when the connection breaks, what arrived is still
 * flushed to the file (a stream pipeline would discard it) so the next run continues from there.
 */
function saveBody(response: IncomingMessage, file: string, flags: 'a' | 'w'): Promise<void> {
  return new Promise((resolve, reject) => {
    const output = createWriteStream(file, { flags });
    let failure: Error | undefined;
    response.once('error', (error) => (failure = error)).once('aborted', () => (failure ??= new Error('the connection closed mid-download')));
    response.once('close', () => output.end());
    output.once('error', reject).once('finish', () => (failure || !response.complete ? reject(failure ?? new Error('the connection closed mid-download')) : resolve()));
    response.pipe(output, { end: false });
  });
}

function resumedAt(contentRange: string | null): number {
  const match = /^bytes (\d+)-\d+\/(?:\d+|\*)$/.exec(contentRange ?? '');
  return match ? Number(match[1]) : -1;
}
