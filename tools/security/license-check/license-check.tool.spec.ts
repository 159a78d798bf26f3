import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTool } from '@tos/sdk/testing';
import { startNpmRegistryFake, type NpmRegistryFake } from '../../../test/support/code-tools/npm-registry';
import { until } from '../../../test/support/poll';
import { buildCodeWorkspace } from '../../../test/support/code-tools/workspace';
import { LicenseCheckTool } from './license-check.tool';
import type { LicenseCheckOutput } from './license-check.tool';

const POLICY = { allow: ['MIT', 'Apache-2.0', 'BSD-3-Clause', 'ISC', 'LGPL-2.1-or-later'], deny: ['AGPL-3.0-only', 'GPL-3.0-only'] };
let root: string;
let registry: NpmRegistryFake;

beforeAll(async () => {
  root = buildCodeWorkspace(mkdtempSync(path.join(tmpdir(), 'license-check-')));
  registry = await startNpmRegistryFake();
});
afterAll(async () => {
  await registry.close();
  rmSync(root, { recursive: true, force: true });
});
afterEach(() => {
  registry.failWith = undefined;
  registry.stall = undefined;
  registry.requests.length = 0;
});

const check = (input: Record<string, unknown>, overrides: { signal?: AbortSignal; egressAllow?: string } = {}) =>
  runTool<LicenseCheckOutput>(LicenseCheckTool, input, { workspaceRoot: root, config: { REGISTRY_URL: registry.url }, ...overrides });
const statuses = (output: LicenseCheckOutput) => Object.fromEntries(output.violations.map((v) => [v.package, `${v.status} ${v.source}`]));

describe('LicenseCheckTool', () => {

  it('reads licences from the lockfile, then node_modules, then the registry (only for what is missing)', async () => {
    const output = await check({ path: 'code/licensed-app', ...POLICY, max_results: 1000 });
    expect(statuses(output)).toEqual({
      pm2: 'denied registry',
      '@fortawesome/fontawesome-free': 'unapproved lockfile',
      'left-pad': 'unapproved registry',
      'legacy-lib': 'invalid lockfile',
      'internal-utils': 'unknown null',
    });
    // mariadb's licence is in node_modules: the registry is asked only for the three it lacks.
    expect(registry.requests.map((request) => request.path).sort()).toEqual(['/internal-utils/1.0.0', '/left-pad/1.3.0', '/pm2/5.3.0']);
    expect(output.summary.allowed).toBe(3);
  });

  it('honours OR and AND in expressions against allow and deny lists', async () => {
    const onlyMit = await check({ path: 'code/licensed-app', allow: ['MIT'], registry_lookup: false });
    expect(onlyMit.violations.find((v) => v.package === 'jszip')).toBeUndefined(); // (MIT OR GPL-3.0-or-later): MIT chosen
    expect(onlyMit.violations.find((v) => v.package === '@fortawesome/fontawesome-free')?.status).toBe('unapproved'); // AND needs all three
    const denyGpl = await check({ path: 'code/licensed-app', deny: ['GPL-3.0-or-later'], registry_lookup: false });
    expect(denyGpl.violations.find((v) => v.package === 'jszip')).toBeUndefined(); // MIT remains a choice
    const denyMit = await check({ path: 'code/licensed-app', deny: ['MIT', 'GPL-3.0-or-later'], registry_lookup: false });
    expect(denyMit.violations.filter((v) => v.status === 'denied').map((v) => v.package)).toEqual(['@fortawesome/fontawesome-free', 'express', 'jszip']);
  });

  it('leaves out dev packages and the registry on request', async () => {
    const output = await check({ path: 'code/licensed-app', ...POLICY, include_dev: false, registry_lookup: false });
    expect(output.violations.map((v) => v.package)).not.toContain('pm2');
    expect(statuses(output)['left-pad']).toBe('unknown null');
    expect(registry.requests).toEqual([]);
  });

  it("sends the account's own registry token, else the operator's", async () => {
    const config = { REGISTRY_URL: registry.url, REGISTRY_TOKEN: 'npm_operator_token' };
    await runTool(LicenseCheckTool, { path: 'code/licensed-app' }, { workspaceRoot: root, config, secrets: { REGISTRY_TOKEN: 'npm_account_token' } });
    expect(new Set(registry.requests.map((request) => request.authorization))).toEqual(new Set(['Bearer npm_account_token']));
    registry.requests.splice(0);
    await runTool(LicenseCheckTool, { path: 'code/licensed-app' }, { workspaceRoot: root, config });
    expect(new Set(registry.requests.map((request) => request.authorization))).toEqual(new Set(['Bearer npm_operator_token']));
  });

  it('refuses bad input naming the parameter', async () => {
    await expect(check({ path: 'code/licensed-app', allow: ['MIT OR Apache-2.0'] })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'allow[0]' } });
    await expect(check({ path: 'code/licensed-app', deny: ['MIT', 'Not A Licence'] })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'deny[1]' } });
    await expect(check({ path: 'code/licensed-app', allow: 'MIT' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'allow' } });
    await expect(check({ path: 'nowhere' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'path' } });
  });

  it('reports registry failures with the upstream status, retryable for 5xx', async () => {
    registry.failWith = 502;
    await expect(check({ path: 'code/licensed-app' })).rejects.toMatchObject({ code: 'TOOL_ERROR', retryable: true, details: { upstream: { service: 'npm-registry', status: 502 } } });
    registry.failWith = 401;
    await expect(check({ path: 'code/licensed-app' })).rejects.toMatchObject({ code: 'TOOL_ERROR', retryable: false, details: { upstream: { service: 'npm-registry', status: 401 } } });
  });

  it('reports the packages a registry that cannot be reached was to answer as unknown, with a warning, instead of failing', async () => {
    // A loopback port nothing listens on: the connection is refused, no packet leaves the machine.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const output = await runTool<LicenseCheckOutput>(LicenseCheckTool, { path: 'code/licensed-app', ...POLICY, max_results: 1000 }, { workspaceRoot: root, config: { REGISTRY_URL: `http://127.0.0.1:${port}` } });
    expect(statuses(output)).toMatchObject({ pm2: 'unknown null', 'left-pad': 'unknown null', 'internal-utils': 'unknown null', '@fortawesome/fontawesome-free': 'unapproved lockfile' });
    expect(output.summary.allowed).toBe(3);
    expect(output.warnings).toEqual([expect.stringMatching(/^The npm registry \(REGISTRY_URL\) could not be reached \(.*ECONNREFUSED.*\): 3 package\(s\) without a licence in the workspace are reported unknown$/)]);
    // A reachable registry leaves no warning.
    expect((await check({ path: 'code/licensed-app', ...POLICY })).warnings).toEqual([]);
  });

  it('reads nested installs (node_modules/x/node_modules/y) as license-checker does, and nothing outside package folders', async () => {
    const app = 'nested-app';
    const installed: Record<string, { name: string; version: string; license?: string }> = {
      'node_modules/a': { name: 'a', version: '1.0.0', license: 'MIT' },
      'node_modules/b': { name: 'b', version: '2.0.0', license: 'ISC' },
      'node_modules/a/node_modules/b': { name: 'b', version: '1.0.0', license: 'GPL-3.0-only' },
      'node_modules/@s/c': { name: '@s/c', version: '1.0.0', license: 'MIT' },
      'node_modules/@s/c/node_modules/d': { name: 'd', version: '1.0.0', license: 'Apache-2.0' },
      'node_modules/a/node_modules/b/node_modules/e': { name: 'e', version: '1.0.0', license: 'BSD-3-Clause' },
      // Not an install: a package's own test fixture, which license-checker does not read either.
      'node_modules/a/test/fixtures/node_modules/f': { name: 'f', version: '1.0.0', license: 'MIT' },
    };
    for (const [location, manifest] of Object.entries(installed)) {
      mkdirSync(path.join(root, app, location), { recursive: true });
      writeFileSync(path.join(root, app, location, 'package.json'), JSON.stringify(manifest));
    }
    const locked = Object.fromEntries(
      [...Object.entries(installed).filter(([location]) => !location.includes('/test/')), ['node_modules/f', { name: 'f', version: '1.0.0' }] as const].map(([location, { version }]) => [location, { version }]),
    );
    const lockfile = { name: app, version: '1.0.0', lockfileVersion: 3, packages: { '': { name: app, version: '1.0.0', dependencies: { a: '1', b: '2', '@s/c': '1', f: '1' } }, ...locked } };
    writeFileSync(path.join(root, app, 'package-lock.json'), JSON.stringify(lockfile));
    const output = await check({ path: app, allow: ['MIT', 'ISC', 'Apache-2.0'], deny: ['GPL-3.0-only'], registry_lookup: false });
    // license-checker on this tree: a MIT, b@2.0.0 ISC, b@1.0.0 GPL-3.0-only, @s/c MIT, d Apache-2.0, e BSD-3-Clause; f is not installed.
    expect(statuses(output)).toEqual({ b: 'denied installed', e: 'unapproved installed', f: 'unknown null' });
    expect(output.summary).toMatchObject({ allowed: 4, denied: 1, unapproved: 1, unknown: 1 });
  });

  it('refuses a registry on a loopback address through the egress policy', async () => {
    await expect(check({ path: 'code/licensed-app' }, { egressAllow: '' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      details: { parameter: 'REGISTRY_URL', expected: 'a public address' },
    });
    expect(registry.requests).toEqual([]);
  });

  it('stops when cancelled while the registry is answering', async () => {
    let release!: () => void;
    registry.stall = new Promise((resolve) => (release = resolve));
    const controller = new AbortController();
    const running = check({ path: 'code/licensed-app' }, { signal: controller.signal });
    await until('the registry to be asked', async () => (registry.requests.length > 0 ? true : undefined), 5_000, 10);
    controller.abort(new Error('cancelled'));
    await expect(running).rejects.toThrow('cancelled');
    release();
  });
});
