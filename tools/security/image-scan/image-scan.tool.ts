import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { countBy, exactlyOneOf, Tool, ToolError, workspaceInputs, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';
import { DockerClients, DOCKER_SETTINGS, engineCall } from '../../integrations/docker';
import { LIMIT_SETTINGS, readSavedImage, type ScanLimits } from './image-layers';
import { inventory, type InstalledPackage } from './inventory';
import {
  ADVISORY_DATA_OUTPUT,
  advisorySource,
  apkOrdering,
  bySeverityThenName,
  describeAdvisory,
  describeAdvisoryData,
  dpkgOrdering,
  findAdvisories,
  OSV_SETTINGS,
  pep440Ordering,
  semverOrdering,
  SEVERITIES,
  SEVERITY_FILTER_INPUTS,
  severityRank,
  type EcosystemRules,
  type Severity,
} from '../../integrations/osv';
import { normalisePypiName } from '../../shared/lockfiles';
import { countsOutput, firstResults, pageOutputs } from '../../shared/scan';

type ImageScanInput = ToolInput<typeof definition>;
type ImageScanOutput = ToolOutput<typeof definition>;

const GIB = 1024 ** 3;
const ECOSYSTEMS: Readonly<Record<string, EcosystemRules>> = {
  Debian: { ordering: dpkgOrdering },
  Alpine: { ordering: apkOrdering },
  npm: { ordering: semverOrdering },
  PyPI: { ordering: pep440Ordering, normaliseName: normalisePypiName },
};

const definition = defineTool({
  id: 'image-scan',
  name: 'Image Scan',
  category: 'security',
  status: 'beta',
  // Caller-supplied archives are parsed here: a thread that dies takes one call, not the service.
  isolated: true,
  description:
    "Lists what is installed in a container image — Debian (dpkg) and Alpine (apk) packages, npm packages (the package.json of every node_modules install, nested ones and hard links too) and Python packages (*.dist-info/METADATA) — layer by layer, and matches them against OSV advisories (Debian and Alpine by source package and release, with dpkg and apk version ordering). The image is one the Docker engine at DOCKER_HOST holds, or a `docker save` tarball in the workspace. Beta: RPM databases, Go and Java binaries, and packages installed without a manifest are not seen (an image with no dpkg or apk database gets a warning saying so); a package is put in the layer that installed its current version.",
  version: '0.9.0',
  effects: 'read',
  open_world: true,
  timeout: 300,
  task_support: 'optional',
  rate_limit: 20,
  config: {
    ...OSV_SETTINGS,
    ...DOCKER_SETTINGS,
    [LIMIT_SETTINGS.archiveBytes]: { type: 'integer', default: 4 * GIB, description: 'Largest image archive read, engine export or tarball, as stored (compressed layers count compressed).' },
    [LIMIT_SETTINGS.layerBytes]: { type: 'integer', default: 4 * GIB, description: 'Most bytes one layer may unpack to; a larger one refuses the image.' },
    [LIMIT_SETTINGS.unpackedBytes]: { type: 'integer', default: 16 * GIB, description: 'Most bytes all layers of an image may unpack to together; more refuses the image.' },
    [LIMIT_SETTINGS.readBytes]: {
      type: 'integer',
      default: 256 * 1024 * 1024,
      description: 'Most bytes of package databases, package manifests and whiteout paths read into memory in one scan; more refuses the image (an image bomb).',
    },
  },
  input: {
    type: 'object',
    properties: {
      image: { type: 'string', maxLength: 512, pattern: '^[A-Za-z0-9][A-Za-z0-9._:/@-]*$', description: 'An image the engine holds: name:tag, name@sha256:…, or an image id. Give this or tarball.' },
      ...workspaceInputs(),
      tarball: { type: 'string', maxLength: 1024, description: 'A `docker save` archive in the workspace. Give this or image.' },
      ...SEVERITY_FILTER_INPUTS,
    },
    ...exactlyOneOf('image', 'tarball'),
  },
  output: {
    type: 'object',
    properties: {
      image: { type: 'string', description: 'What was scanned: the reference, or the tarball path.' },
      os: { type: ['object', 'null'], description: "The image's distribution from os-release (id, version), or null.", properties: { id: { type: 'string' }, version: { type: 'string' } } },
      layers: {
        type: 'array',
        description: 'Each layer, lowest first: its id (sha256 of the layer) and how many of the listed packages it installed.',
        items: { type: 'object', properties: { index: { type: 'integer' }, id: { type: 'string' }, packages: { type: 'integer' } } },
      },
      packages: {
        type: 'array',
        description: 'Every package found: ecosystem (OSV spelling), name (the source package for Debian and Alpine), version, source database, the file listing it, and the layer.',
        items: {
          type: 'object',
          properties: { ecosystem: { type: 'string' }, name: { type: 'string' }, version: { type: 'string' }, source: { type: 'string' }, path: { type: 'string' }, layer_index: { type: 'integer' } },
        },
      },
      vulnerabilities: {
        type: 'array',
        description: 'One entry per advisory and package, worst first: OSV id, aliases, summary, severity, CVSS, package, ecosystem, installed and fixed versions, the layer that installed it.',
        items: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            aliases: { type: 'array', items: { type: 'string' } },
            summary: { type: 'string' },
            severity: { enum: [...SEVERITIES] },
            cvss_score: { type: ['number', 'null'] },
            cvss_vector: { type: ['string', 'null'] },
            package: { type: 'string' },
            ecosystem: { type: 'string' },
            installed_version: { type: 'string' },
            fixed_versions: { type: 'array', items: { type: 'string' } },
            path: { type: 'string' },
            layer_index: { type: 'integer' },
          },
        },
      },
      ...pageOutputs('Vulnerabilities'),
      summary: countsOutput(SEVERITIES, 'Vulnerabilities found per severity (all of them, not only those returned).'),
      source: { type: 'string', enum: ['osv-data-dir', 'osv-api'], description: 'Where the advisories came from.' },
      advisory_data: ADVISORY_DATA_OUTPUT,
      warnings: { type: 'array', items: { type: 'string' }, description: 'What the scan could not see or match.' },
    },
    required: ['image', 'os', 'layers', 'packages', 'vulnerabilities', 'count', 'total', 'truncated', 'summary', 'source', 'advisory_data', 'warnings'],
  },
  examples: [
    {
      name: 'Scan an image the engine holds for high and critical advisories',
      input: { image: 'shop/scan-fixture:1', min_severity: 'high' },
      output: {
        image: 'shop/scan-fixture:1',
        os: {
          id: 'debian',
          version: '12'
        },
        layers: [
          {
            index: 0,
            id: 'sha256:dc708f58ee852fd8c203484b53f889eab3029ab87a21813930f7e60bb149489c',
            packages: 0
          },
          {
            index: 1,
            id: 'sha256:afd17e73d7f69ada23b1c3ad7ae712ea06691fd6c6c58e10646c628a031a9b3f',
            packages: 3
          },
          {
            index: 2,
            id: 'sha256:01ad02e3f690000bffc757aa0a3e797832fe83d8496fc92a11843750e117a8bd',
            packages: 2
          },
          {
            index: 3,
            id: 'sha256:05da2c475c0fed8ad94e644b71475a2bfe861bd2049d9864c5337524bf971bfd',
            packages: 0
          }
        ],
        packages: [
          {
            ecosystem: 'Debian:12',
            name: 'openssl',
            version: '3.0.11-1~deb12u1',
            source: 'dpkg',
            path: '/var/lib/dpkg/status',
            layer_index: 1
          },
          {
            ecosystem: 'Debian:12',
            name: 'zlib',
            version: '1:1.2.13.dfsg-1',
            source: 'dpkg',
            path: '/var/lib/dpkg/status',
            layer_index: 1
          },
          {
            ecosystem: 'PyPI',
            name: 'PyYAML',
            version: '5.3.1',
            source: 'python',
            path: '/usr/lib/python3/dist-packages/PyYAML-5.3.1.dist-info/METADATA',
            layer_index: 1
          },
          {
            ecosystem: 'npm',
            name: '@acme/util',
            version: '2.0.0',
            source: 'npm',
            path: '/app/node_modules/@acme/util/package.json',
            layer_index: 2
          },
          {
            ecosystem: 'npm',
            name: 'lodash',
            version: '4.17.15',
            source: 'npm',
            path: '/app/node_modules/lodash/package.json',
            layer_index: 2
          }
        ],
        vulnerabilities: [
          {
            id: 'GHSA-8q59-q68h-6hv4',
            aliases: [
              'CVE-2020-14343',
              'PYSEC-2021-142'
            ],
            summary: 'Improper Input Validation in PyYAML',
            severity: 'critical',
            cvss_score: 9.8,
            cvss_vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
            package: 'PyYAML',
            ecosystem: 'PyPI',
            installed_version: '5.3.1',
            path: '/usr/lib/python3/dist-packages/PyYAML-5.3.1.dist-info/METADATA',
            layer_index: 1,
            fixed_versions: [
              '5.4'
            ]
          },
          {
            id: 'DEBIAN-CVE-2024-0727',
            aliases: [
              'CVE-2024-0727'
            ],
            summary: 'openssl: denial of service via null dereference in PKCS12 parsing',
            severity: 'high',
            cvss_score: 7.5,
            cvss_vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H',
            package: 'openssl',
            ecosystem: 'Debian:12',
            installed_version: '3.0.11-1~deb12u1',
            path: '/var/lib/dpkg/status',
            layer_index: 1,
            fixed_versions: [
              '3.0.13-1~deb12u1'
            ]
          },
          {
            id: 'GHSA-p6mc-m468-83gw',
            aliases: [
              'CVE-2020-8203'
            ],
            summary: 'Prototype Pollution in lodash',
            severity: 'high',
            cvss_score: 7.4,
            cvss_vector: 'CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:N/I:H/A:H',
            package: 'lodash',
            ecosystem: 'npm',
            installed_version: '4.17.15',
            path: '/app/node_modules/lodash/package.json',
            layer_index: 2,
            fixed_versions: [
              '4.17.19'
            ]
          },
          {
            id: 'GHSA-35jh-r3h4-6jhm',
            aliases: [
              'CVE-2021-23337'
            ],
            summary: 'Command Injection in lodash',
            severity: 'high',
            cvss_score: 7.2,
            cvss_vector: 'CVSS:3.1/AV:N/AC:L/PR:H/UI:N/S:U/C:H/I:H/A:H',
            package: 'lodash',
            ecosystem: 'npm',
            installed_version: '4.17.15',
            path: '/app/node_modules/lodash/package.json',
            layer_index: 2,
            fixed_versions: [
              '4.17.21'
            ]
          }
        ],
        count: 4,
        total: 4,
        truncated: false,
        summary: {
          critical: 1,
          high: 3,
          medium: 0,
          low: 0,
          unknown: 0
        },
        source: 'osv-data-dir',
        advisory_data: {
          source: 'offline',
          directory: '/srv/osv',
          api_url: null,
          queried_at: null,
          ecosystems: [
            { ecosystem: 'Debian', synced_at: 'unknown', data_as_of: 'unknown' },
            { ecosystem: 'PyPI', synced_at: 'unknown', data_as_of: 'unknown' },
            { ecosystem: 'npm', synced_at: 'unknown', data_as_of: 'unknown' }
          ]
        },
        warnings: []
      },
      // Layer ids hash the layers' file times: they differ from checkout to checkout; OSV_DATA_DIR is where the checkout is.
      varies: ['layers.0.id', 'layers.1.id', 'layers.2.id', 'layers.3.id', 'advisory_data.directory'],
    },
  ],
});

@Tool(definition)
export class ImageScanTool implements ToolHandler<typeof definition> {
  // Nest injects the shared clients; a worker thread constructs the tool without DI, and so
  // makes its own (one client per engine per thread).
  constructor(private readonly engines: DockerClients = new DockerClients()) {}

  async execute(input: ImageScanInput, ctx: ToolContext<typeof definition>): Promise<ImageScanOutput> {
    const source = advisorySource(ctx);
    const { name, archive } = await this.open(input, ctx);
    const image = await readSavedImage(archive, scanLimits(ctx), input.image === undefined ? 'tarball' : 'image', ctx.signal);
    ctx.progress(50, `${image.layers.length} layer(s) read`);
    const found = inventory(image);
    const queriedAt = new Date();
    const lookup = await findAdvisories(
      found.packages.map(({ ecosystem, name: packageName, version }) => ({ ecosystem, name: packageName, version })),
      source,
      { ecosystems: ECOSYSTEMS, signal: ctx.signal, onProgress: (share) => ctx.progress(50 + Math.round(share * 45), 'matching advisories') },
    );
    const threshold = severityRank(input.min_severity);
    const vulnerabilities = lookup.findings
      .map(({ query, record, match }) => ({ ...describeAdvisory(record, match.affected), ...located(found.packages[query]), fixed_versions: match.fixed }))
      .filter(({ severity }) => severity === 'unknown' || severityRank(severity) <= threshold)
      .sort(bySeverityThenName((finding) => finding.path));
    const { items, ...page } = firstResults(vulnerabilities, input.max_results);
    return {
      image: name,
      os: found.os,
      layers: image.layers.map(({ id }, index) => ({ index, id, packages: found.packages.filter(({ layer_index }) => layer_index === index).length })),
      packages: found.packages,
      vulnerabilities: items,
      ...page,
      summary: countBy(SEVERITIES, vulnerabilities, ({ severity }) => severity),
      source: source.kind === 'directory' ? 'osv-data-dir' : 'osv-api',
      advisory_data: await describeAdvisoryData(source, found.packages.map(({ ecosystem }) => ecosystem), queriedAt),
      warnings: [...image.warnings, ...found.warnings, ...lookup.warnings],
    };
  }

  /** The image as a `docker save` stream: exported by the engine, or read from the workspace. */
  private async open(input: ImageScanInput, ctx: ToolContext): Promise<{ name: string; archive: Readable }> {
    if (input.tarball !== undefined) return { name: input.tarball, archive: createReadStream(await ctx.workspace.resolve(input.tarball, 'tarball')) };
    const docker = await this.engines.connect(ctx);
    const image = docker.getImage(input.image!);
    await engineCall(() => image.inspect()).catch((err: ToolError) => {
      throw err.details?.upstream && (err.details.upstream as { status?: number }).status === 404
        ? ToolError.invalidInput('image', 'an image the Docker engine holds', input.image, `The Docker engine holds no image '${input.image}'`)
        : err;
    });
    return { name: input.image!, archive: (await engineCall(() => image.get())) as Readable };
  }
}

function scanLimits(ctx: ToolContext): ScanLimits {
  const limit = (key: keyof ScanLimits) => Number(ctx.config[LIMIT_SETTINGS[key]]);
  return { archiveBytes: limit('archiveBytes'), layerBytes: limit('layerBytes'), unpackedBytes: limit('unpackedBytes'), readBytes: limit('readBytes') };
}

function located(installed: InstalledPackage) {
  return { package: installed.name, ecosystem: installed.ecosystem, installed_version: installed.version, path: installed.path, layer_index: installed.layer_index };
}
