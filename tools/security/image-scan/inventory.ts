/**
 * What is installed in an image: its layers applied in order (whiteouts delete lower files), then
 * the package databases and manifests of the result read. OS packages are named by their source
 * package (Debian's `Source`, Alpine's origin), as OSV's Debian and Alpine advisories are, and each
 * package is put in the layer that installed that version of it.
 */
import type { SavedImage } from './image-layers';

export type PackageSource = 'dpkg' | 'apk' | 'npm' | 'python';

export interface InstalledPackage {
  /** OSV ecosystem: `Debian:12`, `Alpine:v3.19`, `npm`, `PyPI`. */
  ecosystem: string;
  name: string;
  version: string;
  source: PackageSource;
  /** The file that lists it. */
  path: string;
  layer_index: number;
}

export interface Inventory {
  os: { id: string; version: string } | null;
  packages: InstalledPackage[];
  warnings: string[];
}

interface Listed {
  name: string;
  version: string;
}

const DPKG_STATUS = 'var/lib/dpkg/status';
const APK_INSTALLED = 'lib/apk/db/installed';

export function inventory(image: SavedImage): Inventory {
  const warnings: string[] = [];
  // path → the layer that wrote it last, and its text; plus every version of each database.
  const files = new Map<string, { layer: number; text: string }>();
  const history = new Map<string, { layer: number; text: string }[]>();
  image.layers.forEach(({ contents }, layer) => {
    for (const folder of contents.opaque) for (const path of [...files.keys()]) if (path.startsWith(folder)) files.delete(path);
    for (const gone of contents.deleted) for (const path of [...files.keys()]) if (path === gone || path.startsWith(`${gone}/`)) files.delete(path);
    for (const [path, text] of contents.files) {
      files.set(path, { layer, text });
      history.set(path, [...(history.get(path) ?? []), { layer, text }]);
    }
  });

  const os = osRelease(files.get('etc/os-release')?.text ?? files.get('usr/lib/os-release')?.text);
  const packages: InstalledPackage[] = [];
  const distro = (family: string, release: (version: string) => string) => {
    if (os?.id === family.toLowerCase()) return `${family}:${release(os.version)}`;
    warnings.push(`The image has ${family} packages but no ${family} os-release: they are matched against every ${family} release's advisories`);
    return family;
  };
  for (const [path, { layer, text }] of files) {
    if (path === DPKG_STATUS || path.startsWith('var/lib/dpkg/status.d/')) {
      const ecosystem = distro('Debian', (version) => version.split('.')[0]);
      packages.push(...layered(history.get(path)!, parseDpkgStatus).map(([listed, at]) => ({ ecosystem, ...listed, source: 'dpkg' as const, path: `/${path}`, layer_index: at })));
    } else if (path === APK_INSTALLED) {
      const ecosystem = distro('Alpine', (version) => `v${version.split('.').slice(0, 2).join('.')}`);
      packages.push(...layered(history.get(path)!, parseApkInstalled).map(([listed, at]) => ({ ecosystem, ...listed, source: 'apk' as const, path: `/${path}`, layer_index: at })));
    } else if (path.endsWith('/package.json')) {
      const listed = parsePackageJson(text);
      if (listed) packages.push({ ecosystem: 'npm', ...listed, source: 'npm', path: `/${path}`, layer_index: layer });
    } else if (path.endsWith('.dist-info/METADATA')) {
      const listed = parseMetadata(text);
      if (listed) packages.push({ ecosystem: 'PyPI', ...listed, source: 'python', path: `/${path}`, layer_index: layer });
    }
  }
  packages.sort((a, b) => a.layer_index - b.layer_index || a.ecosystem.localeCompare(b.ecosystem) || a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
  return { os, packages, warnings };
}

/** The packages of a database's last version, each with the layer since which it has been there at that version. */
function layered(versions: { layer: number; text: string }[], parse: (text: string) => Listed[]): [Listed, number][] {
  const since = new Map<string, number>();
  let current: Listed[] = [];
  for (const { layer, text } of versions) {
    current = parse(text);
    const present = new Set(current.map(key));
    for (const id of [...since.keys()]) if (!present.has(id)) since.delete(id);
    for (const id of present) if (!since.has(id)) since.set(id, layer);
  }
  return current.map((listed) => [listed, since.get(key(listed))!]);
}

function key({ name, version }: Listed): string {
  return `${name}\0${version}`;
}

function paragraphs(text: string): Map<string, string>[] {
  return text
    .split(/\n\s*\n/)
    .map((block) => {
      const fields = new Map<string, string>();
      for (const line of block.split('\n')) {
        const match = /^([A-Za-z0-9-]+):\s?(.*)$/.exec(line);
        if (match) fields.set(match[1], match[2].trim());
      }
      return fields;
    })
    .filter((fields) => fields.size > 0);
}

/** dpkg's status file: installed packages, named and versioned by source package when it differs. */
export function parseDpkgStatus(text: string): Listed[] {
  const listed: Listed[] = [];
  for (const fields of paragraphs(text)) {
    const name = fields.get('Package');
    const version = fields.get('Version');
    if (!name || !version || !/\binstalled$/.test(fields.get('Status') ?? 'install ok installed')) continue;
    const source = /^(\S+)(?:\s+\((.+)\))?$/.exec(fields.get('Source') ?? '');
    listed.push({ name: source?.[1] ?? name, version: source?.[2] ?? version });
  }
  return dedupe(listed);
}

/** apk's installed database: P (package), V (version), o (origin, the source package). */
export function parseApkInstalled(text: string): Listed[] {
  const listed: Listed[] = [];
  for (const block of text.split(/\n\s*\n/)) {
    const fields = new Map(block.split('\n').map((line) => [line.slice(0, 1), line.slice(2).trim()] as [string, string]));
    const name = fields.get('o') || fields.get('P');
    const version = fields.get('V');
    if (name && version) listed.push({ name, version });
  }
  return dedupe(listed);
}

function parsePackageJson(text: string): Listed | null {
  try {
    const { name, version } = JSON.parse(text) as { name?: unknown; version?: unknown };
    return typeof name === 'string' && typeof version === 'string' ? { name, version } : null;
  } catch {
    return null;
  }
}

/** A wheel's METADATA: its Name and Version headers. */
function parseMetadata(text: string): Listed | null {
  const header = paragraphs(text.split(/\n\s*\n/)[0] ?? '')[0];
  const name = header?.get('Name');
  const version = header?.get('Version');
  return name && version ? { name, version } : null;
}

function osRelease(text: string | undefined): Inventory['os'] {
  if (!text) return null;
  const value = (field: string) => new RegExp(`^${field}=(?:"([^"]*)"|(\\S*))`, 'm').exec(text)?.slice(1).find((part) => part !== undefined);
  const id = value('ID');
  return id ? { id, version: value('VERSION_ID') ?? '' } : null;
}

/** Binary packages of one source package at one version are one package to OSV. */
function dedupe(listed: Listed[]): Listed[] {
  return [...new Map(listed.map((entry) => [key(entry), entry])).values()];
}
