import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTool } from '@tos/sdk/testing';
import { startOsvApiFake, type OsvApiFake } from '../../../test/support/code-tools/osv-api';
import { until } from '../../../test/support/poll';
import { buildCodeWorkspace, FIXTURE_OSV_DIR } from '../../../test/support/code-tools/workspace';
import { DependencyCheckTool } from './dependency-check.tool';
import type { DependencyCheckOutput } from './dependency-check.tool';

let root: string;
let osv: OsvApiFake;
const offline = { OSV_DATA_DIR: FIXTURE_OSV_DIR };

beforeAll(async () => {
  root = buildCodeWorkspace(mkdtempSync(path.join(tmpdir(), 'dependency-check-')));
  osv = await startOsvApiFake(FIXTURE_OSV_DIR);
});
afterAll(async () => {
  await osv.close();
  rmSync(root, { recursive: true, force: true });
});
afterEach(() => {
  osv.failWith = undefined;
  osv.stall = undefined;
  osv.pageSize = 1000;
  osv.requests.length = 0;
});

const check = (input: Record<string, unknown>, config: Record<string, string> = offline) =>
  runTool<DependencyCheckOutput>(DependencyCheckTool, input, { workspaceRoot: root, config });
/** [id, package@version, dependency path] of each finding. */
const findings = (output: DependencyCheckOutput) => output.vulnerabilities.map((v) => [v.id, `${v.package}@${v.installed_version}`, v.dependency_path.join(' > ')]);

describe('DependencyCheckTool with OSV_DATA_DIR', () => {

  it('reads every lockfile format under a directory and matches each ecosystem', async () => {
    const output = await check({ path: 'code' });
    expect(output.lockfiles.map((lockfile) => [lockfile.file, lockfile.format, lockfile.packages])).toEqual([
      ['code/go-app/go.sum', 'go.sum', 3],
      ['code/licensed-app/package-lock.json', 'package-lock', 8],
      ['code/npm-app/package-lock.json', 'package-lock', 7],
      ['code/pnpm-app/pnpm-lock.yaml', 'pnpm', 4],
      ['code/python-app/requirements.txt', 'requirements', 4],
      ['code/yarn-berry/yarn.lock', 'yarn', 4],
      ['code/yarn-classic/yarn.lock', 'yarn', 3],
    ]);
    const byFile = (file: string) => findings({ ...output, vulnerabilities: output.vulnerabilities.filter((v) => v.file === file) });
    expect(byFile('code/yarn-classic/yarn.lock')).toEqual([['GHSA-xvch-5gv4-984h', 'minimist@1.2.5', 'mkdirp@0.5.5 > minimist@1.2.5']]);
    expect(byFile('code/yarn-berry/yarn.lock')).toEqual([['GHSA-hrpp-h998-j3pp', 'qs@6.10.1', 'qs@6.10.1']]);
    expect(byFile('code/pnpm-app/pnpm-lock.yaml')).toEqual([
      ['GHSA-xvch-5gv4-984h', 'minimist@1.2.5', 'minimist@1.2.5'],
      ['GHSA-hrpp-h998-j3pp', 'qs@6.7.0', 'express@4.17.1 > qs@6.7.0'],
      ['GHSA-rv95-896h-c2vc', 'express@4.17.1', 'express@4.17.1'],
    ]);
    expect(output.summary).toEqual({ critical: 3, high: 4, medium: 3, low: 3, unknown: 2 });
    expect(output.total).toBe(15);
  });

  it('does not report versions at or past a fix, outside a pre-release range, or withdrawn advisories', async () => {
    const output = await check({ path: 'code' });
    const reported = new Set(output.vulnerabilities.map((v) => `${v.id} ${v.package}@${v.installed_version}`));
    for (const absent of [
      'GHSA-35jh-r3h4-6jhm lodash@4.17.21', // fixed in exactly 4.17.21
      'GHSA-p6mc-m468-83gw lodash@4.17.20', // fixed in 4.17.19
      'GHSA-gxpj-cx7g-858c debug@2.6.9', // fixed in exactly 2.6.9
      'GHSA-8q59-q68h-6hv4 pyyaml@5.4', // PEP 440: fixed in 5.4
      'GHSA-v845-jxx5-vc9f urllib3@2.0.0rc1', // PEP 440: 2.0.0rc1 sorts before the range's 2.0.0
      'GO-2023-1737 github.com/gin-gonic/gin@v1.9.1', // fixed in exactly 1.9.1
      'GHSA-8r6j-v8pm-fqw3 express@4.17.1', // withdrawn
    ]) {
      expect(reported).not.toContain(absent);
    }
    expect(reported).toContain('GO-2021-0238 golang.org/x/net@v0.0.0-20210226172049-e18ecbb05110'); // a pseudo-version before the fix
  });

  it('leaves out dev dependencies and lower severities on request, and caps the list', async () => {
    const production = await check({ path: 'code/npm-app', include_dev: false });
    expect(production.vulnerabilities.map((v) => v.package)).not.toContain('minimist');
    expect(production.packages_scanned).toBe(6);
    const severe = await check({ path: 'code', min_severity: 'high' });
    expect(new Set(severe.vulnerabilities.map((v) => v.severity))).toEqual(new Set(['critical', 'high', 'unknown']));
    const capped = await check({ path: 'code', max_results: 2 });
    expect(capped).toMatchObject({ count: 2, total: 15, truncated: true });
    expect(capped.vulnerabilities.map((v) => v.severity)).toEqual(['critical', 'critical']);
  });

  it("checks this repository's own package-lock.json, bounded, with a stable result shape", async () => {
    const started = Date.now();
    const output = await runTool<DependencyCheckOutput>(DependencyCheckTool, { path: 'package-lock.json' }, { workspaceRoot: path.resolve(__dirname, '../../..'), config: offline });
    expect(output.lockfiles).toEqual([{ file: 'package-lock.json', format: 'package-lock', ecosystem: 'npm', packages: expect.any(Number), skipped: 0 }]);
    expect(output.packages_scanned).toBeGreaterThan(100);
    expect(output.count).toBeLessThanOrEqual(200);
    for (const vulnerability of output.vulnerabilities) expect(vulnerability.dependency_path[vulnerability.dependency_path.length - 1]).toBe(`${vulnerability.package}@${vulnerability.installed_version}`);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('warns when OSV_DATA_DIR has no folder for an ecosystem, and fails when it does not exist', async () => {
    const partial = mkdtempSync(path.join(tmpdir(), 'osv-partial-'));
    try {
      const output = await check({ path: 'code/go-app' }, { OSV_DATA_DIR: partial });
      expect(output).toMatchObject({ count: 0, warnings: ['No OSV records for Go: OSV_DATA_DIR has no Go/ folder'] });
    } finally {
      rmSync(partial, { recursive: true, force: true });
    }
    await expect(check({ path: 'code/go-app' }, { OSV_DATA_DIR: path.join(root, 'missing') })).rejects.toMatchObject({ code: 'TOOL_ERROR', retryable: false });
  });

  it('stops when cancelled while indexing OSV_DATA_DIR, and keeps no half-built index', async () => {
    const records = mkdtempSync(path.join(tmpdir(), 'osv-many-'));
    try {
      mkdirSync(path.join(records, 'npm'));
      for (let index = 0; index < 2_000; index += 1) {
        const affected = [{ package: { ecosystem: 'npm', name: index === 0 ? 'lodash' : `pkg-${index}` }, ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }, { fixed: '4.17.21' }] }] }];
        writeFileSync(path.join(records, 'npm', `TEST-${index}.json`), JSON.stringify({ id: `TEST-${index}`, modified: '2024-01-01T00:00:00Z', affected }));
      }
      const controller = new AbortController();
      const cancelled = runTool(DependencyCheckTool, { path: 'code/npm-app' }, {
        workspaceRoot: root,
        config: { OSV_DATA_DIR: records },
        signal: controller.signal,
        onProgress: (percent) => percent === 10 && controller.abort(new Error('cancelled')),
      });
      await expect(cancelled).rejects.toThrow('cancelled');
      const again = await check({ path: 'code/npm-app' }, { OSV_DATA_DIR: records });
      expect(again.vulnerabilities.map((v) => v.id)).toEqual(['TEST-0']);
    } finally {
      rmSync(records, { recursive: true, force: true });
    }
  });

  it('refuses bad input naming the parameter', async () => {
    await expect(check({ path: '../outside' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path' } });
    await expect(check({ path: 'code/npm-app/package.json' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path' } });
    await expect(check({ path: 'code', max_results: 0 })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'max_results' } });
    await expect(check({ path: 'code', min_severity: 'severe' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'min_severity' } });
    const broken = path.join(root, 'broken');
    mkdirSync(broken, { recursive: true });
    writeFileSync(path.join(broken, 'package-lock.json'), '{"lockfileVersion": 3, "packages": ');
    await expect(check({ path: 'broken' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path', received: 'broken/package-lock.json' } });
    const huge = path.join(root, 'huge');
    mkdirSync(huge);
    writeFileSync(path.join(huge, 'go.sum'), Buffer.alloc(32 * 1024 * 1024 + 1, 0x20));
    await expect(check({ path: 'huge' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path', received: 'huge/go.sum' } });
  });
});

describe('DependencyCheckTool with the OSV API', () => {
  const online = () => ({ OSV_API_URL: osv.url });

  it('finds what the local records find, batching queries and fetching each record once', async () => {
    const fromDirectory = await check({ path: 'code' });
    const fromApi = await check({ path: 'code' }, online());
    expect(fromApi).toEqual({
      ...fromDirectory,
      source: 'osv-api',
      advisory_data: { source: 'osv-api', directory: null, api_url: osv.url, queried_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), ecosystems: [] },
    });
    // Fixture records were put in place by hand, not synced: their dates are unknown.
    expect(fromDirectory.advisory_data).toEqual({
      source: 'offline',
      directory: FIXTURE_OSV_DIR,
      api_url: null,
      queried_at: null,
      ecosystems: ['Go', 'PyPI', 'npm'].map((ecosystem) => ({ ecosystem, synced_at: 'unknown', data_as_of: 'unknown' })),
    });
    const batches = osv.requests.filter((request) => request.path === '/v1/querybatch');
    expect(batches).toEqual([{ method: 'POST', path: '/v1/querybatch', queries: fromApi.packages_scanned }]);
    const fetched = osv.requests.filter((request) => request.path.startsWith('/v1/vulns/')).map((request) => request.path);
    expect(fetched.length).toBe(new Set(fetched).size);
  });

  it('follows next_page_token until a query has all its vulnerabilities', async () => {
    osv.pageSize = 1;
    const output = await check({ path: 'code/npm-app' }, online());
    expect(output.vulnerabilities.filter((v) => v.package === 'lodash').map((v) => v.id)).toEqual(['GHSA-35jh-r3h4-6jhm', 'GHSA-29mw-wpgm-hmr9']);
    expect(osv.requests.filter((request) => request.path === '/v1/querybatch').length).toBeGreaterThan(1);
  });

  it('splits more than 1000 packages into batches of at most 1000', async () => {
    const big = path.join(root, 'big');
    mkdirSync(big, { recursive: true });
    const packages: Record<string, unknown> = { '': { name: 'big', dependencies: {} } };
    for (let index = 0; index < 1500; index += 1) packages[`node_modules/pkg-${index}`] = { version: '1.0.0' };
    writeFileSync(path.join(big, 'package-lock.json'), JSON.stringify({ lockfileVersion: 3, packages }));
    const output = await check({ path: 'big' }, online());
    expect(output).toMatchObject({ count: 0, packages_scanned: 1500 });
    expect(osv.requests.map((request) => request.queries)).toEqual([1000, 500]);
  });

  it('reports OSV failures with the upstream status, retryable for 5xx with Retry-After', async () => {
    osv.failWith = { status: 503, retryAfter: '7' };
    await expect(check({ path: 'code/npm-app' }, online())).rejects.toMatchObject({
      code: 'TOOL_ERROR',
      retryable: true,
      retryAfter: 7,
      details: { upstream: { service: 'osv', status: 503 } },
    });
    osv.failWith = { status: 400 };
    await expect(check({ path: 'code/npm-app' }, online())).rejects.toMatchObject({ code: 'TOOL_ERROR', retryable: false, details: { upstream: { service: 'osv', status: 400 } } });
  });

  it('reports an unreachable OSV API as retryable', async () => {
    const closed = await startOsvApiFake(FIXTURE_OSV_DIR);
    await closed.close();
    await expect(check({ path: 'code/npm-app' }, { OSV_API_URL: closed.url })).rejects.toMatchObject({ code: 'TOOL_ERROR', retryable: true });
  });

  it('refuses an OSV API on a loopback address through the egress policy', async () => {
    await expect(runTool(DependencyCheckTool, { path: 'code/npm-app' }, { workspaceRoot: root, config: online(), egressAllow: '' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      details: { parameter: 'OSV_API_URL', expected: 'a public address' },
    });
    expect(osv.requests).toEqual([]);
  });

  it('stops when cancelled while OSV is answering', async () => {
    let release!: () => void;
    osv.stall = new Promise((resolve) => (release = resolve));
    const controller = new AbortController();
    const running = runTool(DependencyCheckTool, { path: 'code/npm-app' }, { workspaceRoot: root, config: online(), signal: controller.signal });
    await until('OSV to receive the batch', async () => (osv.requests.length > 0 ? true : undefined), 5_000, 10);
    controller.abort(new Error('cancelled'));
    await expect(running).rejects.toThrow('cancelled');
    release();
  });
});
