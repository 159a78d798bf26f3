import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { exportOf, startExportServer, type ExportServer } from '../../../test/support/osv-exports';
import { zip } from '../../../test/support/zip';
import { readSyncState } from '../../../tools/integrations/osv/sync-state';
import { runTool } from '@tos/sdk/testing';
import { buildCodeWorkspace } from '../../../test/support/code-tools/workspace';
import { DependencyCheckTool, type DependencyCheckOutput } from '../../../tools/security/dependency-check/dependency-check.tool';
import { syncAdvisories } from './sync';

let server: ExportServer;
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

  it('starts over when the server cannot continue the partial file (416)', async () => {
    const body = await exportOf(NPM_RECORDS);
    server.exports.set('/npm/all.zip', { body, etag: '"v1"' });
    const cutAt = body.length - 1000;
    server.control.cutAfter = cutAt;
    expect(await sync()).toMatchObject([{ status: 'failed' }]);
    // A mirror that kept the ETag but now serves a shorter file: the range starts past its end.
    const shorter = await exportOf([NPM_RECORDS[0]]);
    expect(shorter.length).toBeLessThan(cutAt);
    server.exports.set('/npm/all.zip', { body: shorter, etag: '"v1"' });

    expect(await sync()).toMatchObject([{ status: 'downloaded', records: 1 }]);
    expect(server.seen.slice(-2).map((request) => [request.headers.range, request.status])).toEqual([
      [`bytes=${cutAt}-`, 416],
      [undefined, 200],
    ]);
    expect((await readSyncState(dir)).partial).toEqual({});
  });

  it.each([
    ['an entry climbing out', () => zip([{ name: '../x.json', body: '{"id":"X","modified":"2026-01-01T00:00:00Z"}' }])],
    ['an entry in a subfolder', () => zip([{ name: 'sub/x.json', body: '{"id":"X","modified":"2026-01-01T00:00:00Z"}' }])],
    ['a symlink entry', () => zip([{ name: 'x.json', body: '../../x.json', mode: 0o120777 }])],
    [
      'a chain of symlink entries',
      () =>
        zip([
          { name: 'a.json', body: 'b.json', mode: 0o120777 },
          { name: 'b.json', body: '../../x.json', mode: 0o120777 },
        ]),
    ],
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

describe('dependency-check on a synced OSV_DATA_DIR', () => {
  let workspace: string;
  beforeAll(() => {
    workspace = buildCodeWorkspace(mkdtempSync(path.join(tmpdir(), 'advisories-scan-')));
  });
  afterAll(() => rmSync(workspace, { recursive: true, force: true }));

  it('matches the synced records and reports when they were synced and how recent they are', async () => {
    server.exports.set('/npm/all.zip', {
      body: await exportOf([
        ['GHSA-sync-0000-0001', 'minimist', '2026-11-20T08:00:00Z'],
        ['GHSA-sync-0000-0002', 'left-pad', '2026-03-01T00:00:00Z'],
      ]),
      etag: '"npm-1"',
    });
    const [outcome] = await sync();
    expect(outcome).toMatchObject({ status: 'downloaded', records: 2 });

    const output = await runTool<DependencyCheckOutput>(DependencyCheckTool, { path: 'code/npm-app' }, { workspaceRoot: workspace, config: { OSV_DATA_DIR: dir } });
    expect(output.vulnerabilities.map((found) => [found.id, `${found.package}@${found.installed_version}`, found.fixed_versions])).toEqual([['GHSA-sync-0000-0001', 'minimist@1.2.5', ['1.3.0']]]);
    expect(output.advisory_data).toEqual({
      source: 'offline',
      directory: dir,
      api_url: null,
      queried_at: null,
      ecosystems: [{ ecosystem: 'npm', synced_at: outcome.synced_at, data_as_of: '2026-11-20T08:00:00.000Z' }],
    });
    expect(output.warnings).toEqual([]);
  });
});
