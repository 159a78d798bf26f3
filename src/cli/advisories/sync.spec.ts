import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { listenHttp } from '../../../test/support/http-listen';
import { zip } from '../../../test/support/zip';
import { readSyncState } from '../../../tools/integrations/osv/sync-state';
import { syncAdvisories } from './sync';

/** A record of `name` fixed in 1.3.0, with incompressible prose so an export is big enough to cut. */
const record = (id: string, name: string, modified: string) =>
  JSON.stringify({
    id,
    modified,
    details: randomBytes(6000).toString('base64'),
    affected: [{ package: { ecosystem: 'npm', name }, ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }, { fixed: '1.3.0' }] }] }],
  });

const exportOf = (records: Array<[string, string, string]>) => zip(records.map(([id, name, modified]) => ({ name: `${id}.json`, body: record(id, name, modified) })));

/** OSV's export bucket on loopback: ETag, If-None-Match, Range with If-Range (RFC 9110), and a cut on demand. */
async function startExportServer() {
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

let server: Awaited<ReturnType<typeof startExportServer>>;
let dir: string;
let outside: string;

beforeAll(async () => {
  server = await startExportServer();
});
afterAll(() => server.close());
beforeEach(() => {
  outside = mkdtempSync(path.join(tmpdir(), 'advisories-sync-'));
  dir = path.join(outside, 'osv');
  server.exports.clear();
  server.seen.length = 0;
});
afterEach(() => rmSync(outside, { recursive: true, force: true }));

const sync = (ecosystems = ['npm']) => syncAdvisories({ directory: dir, ecosystems, source: `${server.url}/` });
const recordsIn = (ecosystem: string) => readdirSync(path.join(dir, ecosystem)).sort();
const NPM_RECORDS: Array<[string, string, string]> = [
  ['GHSA-aaaa-aaaa-aaaa', 'left-pad', '2026-01-02T03:04:05Z'],
  ['GHSA-bbbb-bbbb-bbbb', 'right-pad', '2026-11-20T08:00:00Z'],
  ['GHSA-cccc-cccc-cccc', 'up-pad', '2025-06-01T00:00:00Z'],
];

describe('tos advisories sync', () => {
  it('downloads, unpacks and records each export, then skips it while its ETag holds', async () => {
    server.exports.set('/npm/all.zip', { body: await exportOf(NPM_RECORDS), etag: '"v1"' });
    server.exports.set('/Debian/all.zip', { body: await exportOf([['DEBIAN-CVE-2026-0001', 'openssl', '2026-10-01T00:00:00Z']]), etag: '"d1"' });

    const first = await sync(['npm', 'Debian']);
    expect(first).toMatchObject([
      { ecosystem: 'npm', status: 'downloaded', records: 3, data_as_of: '2026-11-20T08:00:00.000Z' },
      { ecosystem: 'Debian', status: 'downloaded', records: 1, data_as_of: '2026-10-01T00:00:00.000Z' },
    ]);
    expect(recordsIn('npm')).toEqual(['GHSA-aaaa-aaaa-aaaa.json', 'GHSA-bbbb-bbbb-bbbb.json', 'GHSA-cccc-cccc-cccc.json']);
    const state = await readSyncState(dir);
    expect(state.ecosystems.npm).toEqual({
      url: `${server.url}/npm/all.zip`,
      etag: '"v1"',
      last_modified: 'Wed, 25 Nov 2026 10:00:00 GMT',
      synced_at: first[0].synced_at,
      records: 3,
      newest_record: '2026-11-20T08:00:00.000Z',
    });
    expect(state.partial).toEqual({});

    const second = await sync(['npm', 'Debian']);
    expect(second.map((outcome) => [outcome.ecosystem, outcome.status, outcome.records])).toEqual([
      ['npm', 'unchanged', 3],
      ['Debian', 'unchanged', 1],
    ]);
    expect(server.seen.slice(-2).map((request) => [request.headers['if-none-match'], request.status])).toEqual([
      ['"v1"', 304],
      ['"d1"', 304],
    ]);
    expect(recordsIn('npm')).toHaveLength(3);
  });

  it('replaces the folder with one rename when the export changes', async () => {
    server.exports.set('/npm/all.zip', { body: await exportOf(NPM_RECORDS), etag: '"v1"' });
    await sync();
    server.exports.set('/npm/all.zip', { body: await exportOf([NPM_RECORDS[0]]), etag: '"v2"' });
    expect(await sync()).toMatchObject([{ status: 'downloaded', records: 1, data_as_of: '2026-01-02T03:04:05.000Z' }]);
    expect(recordsIn('npm')).toEqual(['GHSA-aaaa-aaaa-aaaa.json']);
    // The folder scanners read is a link switched in one rename; the previous generation is gone.
    expect(lstatSync(path.join(dir, 'npm')).isSymbolicLink()).toBe(true);
    expect(readdirSync(path.join(dir, '.osv-sync.d'))).toHaveLength(1);
  });

  it('resumes a cut download with Range and If-Range, ending with the whole export', async () => {
    const body = await exportOf(NPM_RECORDS);
    server.exports.set('/npm/all.zip', { body, etag: '"v1"' });
    server.control.cutAfter = Math.floor(body.length / 2);

    const cut = await sync();
    expect(cut).toMatchObject([{ ecosystem: 'npm', status: 'failed' }]);
    expect(existsSync(path.join(dir, 'npm'))).toBe(false);
    expect((await readSyncState(dir)).partial.npm).toEqual({ url: `${server.url}/npm/all.zip`, etag: '"v1"' });

    expect(await sync()).toMatchObject([{ status: 'resumed', records: 3 }]);
    const resumed = server.seen.at(-1)!;
    expect(resumed.status).toBe(206);
    expect(resumed.headers.range).toMatch(/^bytes=[1-9]\d*-$/);
    expect(resumed.headers['if-range']).toBe('"v1"');
    expect(recordsIn('npm')).toHaveLength(3);
    expect(JSON.parse(readFileSync(path.join(dir, 'npm', 'GHSA-bbbb-bbbb-bbbb.json'), 'utf8'))).toMatchObject({ id: 'GHSA-bbbb-bbbb-bbbb' });
    expect((await readSyncState(dir)).partial).toEqual({});
  });

  it('restarts from zero when the export changed between the cut and the resume', async () => {
    const old = await exportOf(NPM_RECORDS);
    server.exports.set('/npm/all.zip', { body: old, etag: '"v1"' });
    server.control.cutAfter = Math.floor(old.length / 2);
    expect(await sync()).toMatchObject([{ status: 'failed' }]);

    server.exports.set('/npm/all.zip', { body: await exportOf([NPM_RECORDS[1]]), etag: '"v2"' });
    expect(await sync()).toMatchObject([{ status: 'downloaded', records: 1 }]);
    const restarted = server.seen.at(-1)!;
    expect([restarted.headers['if-range'], restarted.status]).toEqual(['"v1"', 200]);
    expect(recordsIn('npm')).toEqual(['GHSA-bbbb-bbbb-bbbb.json']);
    expect((await readSyncState(dir)).ecosystems.npm.etag).toBe('"v2"');
  });

  it.each([
    ['an entry climbing out', () => zip([{ name: '../x.json', body: '{"id":"X","modified":"2026-01-01T00:00:00Z"}' }])],
    ['an entry in a subfolder', () => zip([{ name: 'sub/x.json', body: '{"id":"X","modified":"2026-01-01T00:00:00Z"}' }])],
    ['a symlink entry', () => zip([{ name: 'x.json', body: '../../x.json', mode: 0o120777 }])],
    ['a bomb past the ratio', () => zip([{ name: 'x.json', body: Buffer.alloc(7 * 1024 * 1024, 0x20) }])],
  ])('refuses %s, writing nothing and keeping the records it had', async (_, hostile) => {
    server.exports.set('/npm/all.zip', { body: await exportOf(NPM_RECORDS), etag: '"v1"' });
    await sync();
    server.exports.set('/npm/all.zip', { body: await hostile(), etag: '"evil"' });

    const [outcome] = await sync();
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toBeTruthy();
    expect(recordsIn('npm')).toHaveLength(3);
    expect(readdirSync(outside)).toEqual(['osv']);
    expect(readdirSync(dir).sort()).toEqual(['.osv-sync.d', '.osv-sync.json', 'npm']);
    expect(readdirSync(path.join(dir, '.osv-sync.d'))).toHaveLength(1);
    expect((await readSyncState(dir)).ecosystems.npm.etag).toBe('"v1"');
  });

  it('refuses an ecosystem name that is a path or a release', async () => {
    expect(await syncAdvisories({ directory: dir, ecosystems: ['../npm', 'Debian:12'], source: server.url })).toMatchObject([{ status: 'failed' }, { status: 'failed' }]);
    expect(server.seen).toEqual([]);
  });
});
