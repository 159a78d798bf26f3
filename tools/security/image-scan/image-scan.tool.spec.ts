import { createReadStream, createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { runTool, toolFailure } from '@tos/sdk/testing';
import { buildFixtureImage, findDockerd, SCAN_FIXTURE, startDockerEngine, type DockerEngine } from '../../../test/support/docker/docker-engine';
import { FIXTURE_OSV_DIR } from '../../../test/support/code-tools/workspace';
import { gzipLayer, packageJsonBomb, savedImage } from '../../../test/support/docker/image-bomb';
import { describeWith } from '../../../test/support/prerequisites';
import { tar } from '../../../test/support/tar';
import { DockerClients } from '../../integrations/docker';
import { ImageScanTool } from './image-scan.tool';
import { readSavedImage } from './image-layers';
import { inventory, parseApkInstalled, parseDpkgStatus } from './inventory';

interface Output {
  image: string;
  os: { id: string; version: string } | null;
  layers: { index: number; id: string; packages: number }[];
  packages: { ecosystem: string; name: string; version: string; source: string; path: string; layer_index: number }[];
  vulnerabilities: { id: string; package: string; ecosystem: string; installed_version: string; fixed_versions: string[]; severity: string; layer_index: number; path: string }[];
  count: number;
  total: number;
  summary: Record<string, number>;
  advisory_data: { source: string; directory: string | null; ecosystems: { ecosystem: string; synced_at: string; data_as_of: string }[] };
  warnings: string[];
}

describe('image-scan inventories', () => {
  it('reads installed dpkg packages by source package and version, skipping removed ones', () => {
    const status = 'Package: libssl3\nStatus: install ok installed\nSource: openssl\nVersion: 3.0.11-1\n\nPackage: zlib1g\nStatus: install ok installed\nSource: zlib (1:1.2.13.dfsg-1)\nVersion: 1:1.2.13.dfsg-1+b1\n\nPackage: telnet\nStatus: deinstall ok config-files\nVersion: 0.17\n';
    expect(parseDpkgStatus(status)).toEqual([
      { name: 'openssl', version: '3.0.11-1' },
      { name: 'zlib', version: '1:1.2.13.dfsg-1' },
    ]);
  });

  it('reads apk packages by origin', () => {
    const installed = 'C:Q1abc=\nP:libcrypto3\nV:3.1.4-r5\no:openssl\n\nC:Q1def=\nP:musl\nV:1.2.4-r2\no:musl\n';
    expect(parseApkInstalled(installed)).toEqual([
      { name: 'openssl', version: '3.1.4-r5' },
      { name: 'musl', version: '1.2.4-r2' },
    ]);
  });
});

describe('image-scan limits on what an image unpacks to', () => {
  let workspace: string;
  const scan = (tarball: string, config: Record<string, string> = {}) => runTool<Output>(new ImageScanTool(new DockerClients()), { tarball }, { config: { OSV_DATA_DIR: FIXTURE_OSV_DIR, ...config }, workspaceRoot: workspace });
  const mib = (n: number) => n * 1024 * 1024;

  beforeAll(async () => {
    workspace = mkdtempSync(path.join(tmpdir(), 'tos-scan-limits-'));
    writeFileSync(path.join(workspace, 'bomb.tar'), await packageJsonBomb());
    const filler = (name: string, size: number) => ({ path: name, size });
    writeFileSync(path.join(workspace, 'big-layer.tar'), await savedImage([await gzipLayer([filler('data/blob', mib(3))])]));
    writeFileSync(path.join(workspace, 'two-layers.tar'), await savedImage([await gzipLayer([filler('data/a', mib(2))]), await gzipLayer([filler('data/b', mib(2))])]));
    const whiteouts = Array.from({ length: 20_000 }, (_, index) => ({ path: `usr/share/doc/${'x'.repeat(40)}/.wh.gone-${index}`, size: 0 }));
    writeFileSync(path.join(workspace, 'whiteouts.tar'), await savedImage([await gzipLayer(whiteouts)]));
    const small = [{ path: 'app/node_modules/lodash/package.json', head: '{"name":"lodash","version":"4.17.15","description":"kept out"}', size: 64 }];
    writeFileSync(path.join(workspace, 'small.tar'), await savedImage([await gzipLayer(small)]));
  }, 120_000);
  afterAll(() => rmSync(workspace, { recursive: true, force: true }));

  it('refuses the reported bomb (60 package.json files of 15 MiB in one gzip layer) by its read budget, naming the setting', async () => {
    const err = await toolFailure(scan('bomb.tar'));
    expect(err).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'tarball' } });
    expect(err.message).toMatch(/IMAGE_SCAN_MAX_READ_BYTES/);
    expect(err.message).toMatch(/256 MiB/);
  }, 60_000);

  it.each([
    ['a layer that unpacks beyond IMAGE_SCAN_MAX_LAYER_BYTES', 'big-layer.tar', { IMAGE_SCAN_MAX_LAYER_BYTES: String(mib(1)) }, /IMAGE_SCAN_MAX_LAYER_BYTES/],
    ['layers that unpack together beyond IMAGE_SCAN_MAX_UNPACKED_BYTES', 'two-layers.tar', { IMAGE_SCAN_MAX_UNPACKED_BYTES: String(mib(3)) }, /IMAGE_SCAN_MAX_UNPACKED_BYTES/],
    ['whiteouts beyond IMAGE_SCAN_MAX_READ_BYTES', 'whiteouts.tar', { IMAGE_SCAN_MAX_READ_BYTES: String(mib(1)) }, /IMAGE_SCAN_MAX_READ_BYTES/],
  ])('refuses %s as INVALID_INPUT naming it', async (_, tarball, config, setting) => {
    const err = await toolFailure(scan(tarball, config));
    expect(err).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'tarball' } });
    expect(err.message).toMatch(setting);
  });

  it('keeps of each package database only the packages it lists, not its text', async () => {
    // Twelve layers, each rewriting dpkg's status: one package, padded to 15 MiB.
    const layers = await Promise.all(
      Array.from({ length: 12 }, (_, layer) => gzipLayer([{ path: 'var/lib/dpkg/status', head: `Package: big\nStatus: install ok installed\nVersion: 1.0.${layer}-1~deb12u1\n\n`, size: mib(15) }])),
    );
    writeFileSync(path.join(workspace, 'statuses.tar'), await savedImage(layers));
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const limits = { archiveBytes: mib(64), layerBytes: mib(64), unpackedBytes: mib(512), readBytes: mib(256) };
    gc();
    const before = process.memoryUsage().heapUsed;
    const image = await readSavedImage(createReadStream(path.join(workspace, 'statuses.tar')), limits, 'tarball', new AbortController().signal);
    gc();
    const held = process.memoryUsage().heapUsed - before;
    expect(inventory(image).packages).toEqual([expect.objectContaining({ name: 'big', version: '1.0.11-1~deb12u1', layer_index: 11 })]);
    // Holding each layer's text (or a slice of it, which keeps it whole) would be 12 x 15 MiB.
    expect(held).toBeLessThan(mib(16));
  }, 60_000);

  it('says so when an image has more manifests than it keeps', async () => {
    const manifests = Array.from({ length: 50_001 }, (_, index) => ({ path: `app/node_modules/p${index}/package.json`, head: `{"name":"p${index}","version":"1.0.0"}`, size: 40 }));
    writeFileSync(path.join(workspace, 'many.tar'), await savedImage([await gzipLayer(manifests)]));
    const out = await scan('many.tar');
    expect(out.packages).toHaveLength(50_000);
    expect(out.warnings).toContain('The image has more than 50000 package databases and manifests: the rest were not read');
  }, 60_000);

  it('lists nested node_modules installs and hard-linked manifests, each at its own path', async () => {
    const manifest = (name: string, version: string) => JSON.stringify({ name, version });
    const npm = 'usr/local/lib/node_modules/npm/node_modules';
    const layer = await tar([
      { name: 'app/node_modules/express/package.json', body: manifest('express', '4.17.1') },
      { name: 'app/node_modules/express/node_modules/qs/package.json', body: manifest('qs', '6.7.0') },
      { name: 'app/node_modules/@acme/util/node_modules/lodash/package.json', body: manifest('lodash', '4.17.15') },
      { name: 'app/node_modules/a/node_modules/b/node_modules/@s/c/package.json', body: manifest('@s/c', '1.0.0') },
      { name: `${npm}/@npmcli/arborist/node_modules/semver/package.json`, body: manifest('semver', '7.3.5') },
      // pnpm's layout: the store's copy, and a hard link to it from another path.
      { name: 'srv/node_modules/.pnpm/ms@2.1.3/node_modules/ms/package.json', body: manifest('ms', '2.1.3') },
      { name: 'srv/node_modules/.pnpm/debug@4.3.4/node_modules/ms/package.json', type: 'link', linkname: 'srv/node_modules/.pnpm/ms@2.1.3/node_modules/ms/package.json' },
      { name: 'srv/node_modules/left-pad/package.json', type: 'link', linkname: 'root/.pnpm-store/v3/files/ab/cdef' },
    ]);
    writeFileSync(path.join(workspace, 'nested.tar'), await savedImage([layer]));
    const out = await scan('nested.tar');
    expect(out.packages.map(({ name, version, path: where }) => `${name}@${version} ${where}`).sort()).toEqual([
      '@s/c@1.0.0 /app/node_modules/a/node_modules/b/node_modules/@s/c/package.json',
      'express@4.17.1 /app/node_modules/express/package.json',
      'lodash@4.17.15 /app/node_modules/@acme/util/node_modules/lodash/package.json',
      'ms@2.1.3 /srv/node_modules/.pnpm/debug@4.3.4/node_modules/ms/package.json',
      'ms@2.1.3 /srv/node_modules/.pnpm/ms@2.1.3/node_modules/ms/package.json',
      'qs@6.7.0 /app/node_modules/express/node_modules/qs/package.json',
      `semver@7.3.5 /${npm}/@npmcli/arborist/node_modules/semver/package.json`,
    ]);
    // The nested lodash is the fixture advisories' vulnerable version: found where it is installed.
    expect(out.vulnerabilities).toContainEqual(expect.objectContaining({ package: 'lodash', path: '/app/node_modules/@acme/util/node_modules/lodash/package.json' }));
    expect(out.warnings).toContainEqual(expect.stringMatching(/^1 package manifest\(s\) in layer sha256:[0-9a-f]{64} are hard links to files the scan does not read/));
  });

  it('says so when an image has no OS package database (busybox-like), rather than 0 packages silently', async () => {
    const busybox = await tar([
      { name: 'bin/', type: 'directory' },
      { name: 'bin/busybox', body: '\x7fELF busybox' },
      { name: 'bin/sh', type: 'symlink', linkname: 'busybox' },
      { name: 'etc/passwd', body: 'root:x:0:0:root:/root:/bin/sh\n' },
    ]);
    writeFileSync(path.join(workspace, 'busybox.tar'), await savedImage([busybox]));
    const out = await scan('busybox.tar');
    expect(out.packages).toEqual([]);
    expect(out.warnings).toEqual([
      'The image has no OS package database this scan reads (/var/lib/dpkg/status, /lib/apk/db/installed): what it installed otherwise (busybox, static binaries, RPM packages) is not seen; 0 package(s) come from language manifests alone',
    ]);
    // An image with one says nothing of the kind.
    const debian = await tar([
      { name: 'etc/os-release', body: 'ID=debian\nVERSION_ID="12"\n' },
      { name: 'var/lib/dpkg/status', body: 'Package: zlib1g\nStatus: install ok installed\nSource: zlib (1:1.2.13.dfsg-1)\nVersion: 1:1.2.13.dfsg-1+b1\n' },
    ]);
    writeFileSync(path.join(workspace, 'debian.tar'), await savedImage([debian]));
    expect((await scan('debian.tar')).warnings).toEqual([]);
  });

  it('reads the same images within their limits', async () => {
    await expect(scan('two-layers.tar', { IMAGE_SCAN_MAX_UNPACKED_BYTES: String(mib(5)) })).resolves.toMatchObject({ layers: [{ index: 0 }, { index: 1 }] });
    const small = await scan('small.tar');
    expect(small.packages).toEqual([{ ecosystem: 'npm', name: 'lodash', version: '4.17.15', source: 'npm', path: '/app/node_modules/lodash/package.json', layer_index: 0 }]);
    // Records put in place by hand (no `tos advisories sync` state): which folder, dates unknown.
    expect(small.advisory_data).toMatchObject({ source: 'offline', directory: FIXTURE_OSV_DIR, ecosystems: [{ ecosystem: 'npm', synced_at: 'unknown', data_as_of: 'unknown' }] });
  });
});

describeWith(findDockerd(), 'docker.io docker-registry busybox-static (as root)')('image-scan', () => {
  let engine: DockerEngine;
  let workspace: string;
  const tool = new ImageScanTool(new DockerClients());
  const scan = (input: Record<string, unknown>, overrides: { host?: string; signal?: AbortSignal } = {}) =>
    runTool<Output>(tool, input, { config: { DOCKER_HOST: overrides.host ?? engine.host, OSV_DATA_DIR: FIXTURE_OSV_DIR }, workspaceRoot: workspace, signal: overrides.signal });

  beforeAll(async () => {
    workspace = mkdtempSync(path.join(tmpdir(), 'tos-scan-ws-'));
    engine = await startDockerEngine();
    await buildFixtureImage(engine.docker, SCAN_FIXTURE, 'shop/scan-fixture:1');
    mkdirSync(path.join(workspace, 'images'));
    await pipeline(await engine.docker.getImage('shop/scan-fixture:1').get(), createWriteStream(path.join(workspace, 'images', 'shop.tar')));
    writeFileSync(path.join(workspace, 'images', 'not-an-image.tar'), 'plain text, not a tar archive');
  }, 60_000);
  afterAll(async () => {
    await engine?.stop();
    rmSync(workspace, { recursive: true, force: true });
  }, 60_000);

  const expectFixtureInventory = (out: Output) => {
    expect(out.os).toEqual({ id: 'debian', version: '12' });
    expect(out.layers.map(({ packages }) => packages)).toEqual([0, 3, 2, 0]);
    expect(out.packages.map(({ ecosystem, name, version, layer_index }) => `${layer_index} ${ecosystem} ${name}@${version}`)).toEqual([
      '1 Debian:12 openssl@3.0.11-1~deb12u1',
      '1 Debian:12 zlib@1:1.2.13.dfsg-1',
      '1 PyPI PyYAML@5.3.1',
      '2 npm @acme/util@2.0.0',
      '2 npm lodash@4.17.15',
    ]);
    expect(out.vulnerabilities).toContainEqual(
      expect.objectContaining({ id: 'DEBIAN-CVE-2024-0727', package: 'openssl', ecosystem: 'Debian:12', installed_version: '3.0.11-1~deb12u1', fixed_versions: ['3.0.13-1~deb12u1'], severity: 'high', layer_index: 1, path: '/var/lib/dpkg/status' }),
    );
    expect(out.vulnerabilities.map(({ package: name }) => name).sort()).toEqual(expect.arrayContaining(['PyYAML', 'lodash', 'openssl']));
    // Debian:12 packages are matched from the Debian folder, the one `tos advisories sync` fills.
    expect(out.advisory_data.ecosystems.map(({ ecosystem }) => ecosystem)).toEqual(['Debian', 'PyPI', 'npm']);
    expect(out.warnings).toEqual([]);
  };

  it('inventories an engine image layer by layer, whiteouts applied, and matches Debian, npm and PyPI advisories', async () => {
    const out = await scan({ image: 'shop/scan-fixture:1' });
    expectFixtureInventory(out);
    expect(out.packages.some(({ name }) => name === 'left-pad')).toBe(false);
    expect(out.summary.high).toBeGreaterThan(0);
  });

  it('reads the same from a docker save tarball in the workspace', async () => {
    expectFixtureInventory(await scan({ tarball: 'images/shop.tar' }));
  });

  it('filters by severity', async () => {
    const out = await scan({ image: 'shop/scan-fixture:1', min_severity: 'critical' });
    expect(out.vulnerabilities.every(({ severity }) => severity === 'critical' || severity === 'unknown')).toBe(true);
  });

  it.each([
    ['both', { image: 'shop/scan-fixture:1', tarball: 'images/shop.tar' }, 'tarball'],
    ['a tarball that is no image', { tarball: 'images/not-an-image.tar' }, 'tarball'],
    ['a tarball outside the workspace', { tarball: '../etc/passwd' }, 'tarball'],
    ['an image the engine does not hold', { image: 'shop/nothing:0' }, 'image'],
  ])('refuses %s as INVALID_INPUT', async (_, input, parameter) => {
    expect(await toolFailure(scan(input))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter } });
  });

  it('refuses neither image nor tarball as a missing parameter', async () => {
    expect(await toolFailure(scan({}))).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'image', expected: "exactly one of 'image' or 'tarball'" } });
  });

  it('reports an engine that does not answer as retryable', async () => {
    expect(await toolFailure(scan({ image: 'shop/scan-fixture:1' }, { host: `unix://${path.join(workspace, 'no.sock')}` }))).toMatchObject({ code: 'TOOL_ERROR', retryable: true });
  });

  it('stops reading when cancelled', async () => {
    const abort = new AbortController();
    abort.abort(new Error('cancelled by the test'));
    await expect(scan({ tarball: 'images/shop.tar' }, { signal: abort.signal })).rejects.toThrow(/cancelled by the test|aborted/i);
  });
});
