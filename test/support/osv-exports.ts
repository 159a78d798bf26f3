/** OSV's export bucket (`<Ecosystem>/all.zip`) on loopback, for `tos advisories sync` and the scanners reading what it unpacks. */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { listenHttp } from './http-listen';
import { zip } from './zip';

/** An npm record of `name` fixed in 1.3.0, with incompressible prose so an export is big enough to cut. */
const record = (id: string, name: string, modified: string) =>
  JSON.stringify({
    id,
    modified,
    details: randomBytes(6000).toString('base64'),
    affected: [{ package: { ecosystem: 'npm', name }, ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }, { fixed: '1.3.0' }] }] }],
  });

export const exportOf = (records: Array<[string, string, string]>) => zip(records.map(([id, name, modified]) => ({ name: `${id}.json`, body: record(id, name, modified) })));

/** OSV's export bucket on loopback: ETag, If-None-Match, Range with If-Range (RFC 9110), and a cut on demand. */
export async function startExportServer() {
  const exports = new Map<string, { body: Buffer; etag: string }>();
  const seen: Array<{ url: string; headers: IncomingHttpHeaders; status: number }> = [];
  const control = { cutAfter: undefined as number | undefined };
  const server = createServer((request, response) => {
    const served = exports.get(request.url!);
    const answer = (status: number, headers: Record<string, string | number> = {}) => {
      seen.push({ url: request.url!, headers: request.headers, status });
      response.writeHead(status, headers);
    };
    if (!served) return answer(404), response.end();
    const { body, etag } = served;
    if (request.headers['if-none-match'] === etag) return answer(304, { etag }), response.end();
    const range = /^bytes=(\d+)-$/.exec(request.headers.range ?? '');
    const ranged = range && (request.headers['if-range'] === undefined || request.headers['if-range'] === etag);
    const start = ranged ? Number(range[1]) : 0;
    if (ranged && start >= body.length) return answer(416, { 'content-range': `bytes */${body.length}` }), response.end();
    const part = body.subarray(start);
    answer(ranged ? 206 : 200, {
      etag,
      'last-modified': 'Wed, 25 Nov 2026 10:00:00 GMT',
      'accept-ranges': 'bytes',
      'content-length': part.length,
      ...(ranged ? { 'content-range': `bytes ${start}-${body.length - 1}/${body.length}` } : {}),
    });
    if (control.cutAfter === undefined) return response.end(part);
    response.write(part.subarray(0, control.cutAfter), () => response.socket?.destroy());
    control.cutAfter = undefined;
  });
  const listening = await listenHttp(server);
  return { ...listening, exports, seen, control };
}

export type ExportServer = Awaited<ReturnType<typeof startExportServer>>;
