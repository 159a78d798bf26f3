/**
 * What is installed in an image: its layers applied in order (whiteouts delete lower files), then
 * the package databases and manifests of the result read. OS packages are named by their source
 * package (Debian's `Source`, Alpine's origin), as OSV's Debian and Alpine advisories are, and each
 * package is put in the layer that installed that version of it.
 */
import { ownText } from '../../shared/scan';
import type { SavedImage } from './image-layers';

export type PackageSource = 'dpkg' | 'apk' | 'npm' | 'python';

export type InstalledPackage = {
  /** OSV ecosystem: `Debian:12`, `Alpine:v3.19`, `npm`, `PyPI`. */
  ecosystem: string;
  name: string;
  version: string;
  source: PackageSource;
  /** The file that lists it. */
  path: string;
  layer_index: number;
};

export interface Inventory {
  os: { id: string; version: string } | null;
  packages: InstalledPackage[];
  warnings: string[];
}

interface Listed {
  name: string;
  version: string;
}

/** What the inventory keeps of one file: the packages it lists, or os-release's distribution. */
export type InventoryFile = { listed: Listed[] } | { os: Inventory['os'] };

const DPKG_STATUS = 'var/lib/dpkg/status';
const APK_INSTALLED = 'lib/apk/db/installed';
/** Longer names or versions are no real package's (npm caps names at 214): not kept. */
const MAX_FIELD_LENGTH = 256;

/** A file's text reduced to what the inventory reads of it, as it is read: the text is not kept. */
export function summarise(path: string, text: string): InventoryFile {
  if (path.endsWith('os-release')) {
    const os = osRelease(text);
    return { os: os && { id: ownText(os.id, MAX_FIELD_LENGTH), version: ownText(os.version, MAX_FIELD_LENGTH) } };
  }
  const listed = isDpkgStatus(path) ? parseDpkgStatus(text) : path === APK_INSTALLED ? parseApkInstalled(text) : [(path.endsWith('/package.json') ? parsePackageJson : parseMetadata)(text)];
  const wanted = listed.filter((entry): entry is Listed => entry !== null && entry.name.length <= MAX_FIELD_LENGTH && entry.version.length <= MAX_FIELD_LENGTH);
  // Copied: a field parsed out of a database may be a slice that keeps the whole file alive.
  return { listed: wanted.map(({ name, version }) => ({ name: ownText(name), version: ownText(version) })) };
}

export function inventory(image: SavedImage): Inventory {
  const warnings: string[] = [];
  // path → the layer that wrote it last, and what it lists; plus every version of each database.
  const files = new Map<string, { layer: number; file: InventoryFile }>();
  const history = new Map<string, { layer: number; listed: Listed[] }[]>();
  image.layers.forEach(({ contents }, layer) => {
    // By each kept path's ancestors, not by each whiteout: a layer may hold far more whiteouts than we keep files.
    const deleted = new Set(contents.deleted);
    const opaque = new Set(contents.opaque);
    for (const path of [...files.keys()]) if (opaque.has('') || deleted.has(path) || ancestors(path).some((folder) => opaque.has(`${folder}/`) || deleted.has(folder))) files.delete(path);
    for (const [path, file] of contents.files) {
      files.set(path, { layer, file });
      if ('listed' in file) history.set(path, [...(history.get(path) ?? []), { layer, listed: file.listed }]);
    }
  });

  const osOf = (path: string) => {
    const file = files.get(path)?.file;
    return file && 'os' in file ? file.os : null;
  };
  const os = osOf('etc/os-release') ?? osOf('usr/lib/os-release');
  const packages: InstalledPackage[] = [];
  const distro = (family: string, release: (version: string) => string) => {
    if (os?.id === family.toLowerCase()) return `${family}:${release(os.version)}`;
    warnings.push(`The image has ${family} packages but no ${family} os-release: they are matched against every ${family} release's advisories`);
    return family;
  };
  for (const [path, { layer, file }] of files) {
    if (!('listed' in file)) continue;
    if (isDpkgStatus(path)) {
      const ecosystem = distro('Debian', (version) => version.split('.')[0]);
      packages.push(...layered(history.get(path)!).map(([listed, at]) => ({ ecosystem, ...listed, source: 'dpkg' as const, path: `/${path}`, layer_index: at })));
    } else if (path === APK_INSTALLED) {
      const ecosystem = distro('Alpine', (version) => `v${version.split('.').slice(0, 2).join('.')}`);
      packages.push(...layered(history.get(path)!).map(([listed, at]) => ({ ecosystem, ...listed, source: 'apk' as const, path: `/${path}`, layer_index: at })));
    } else {
      const npm = path.endsWith('/package.json');
      for (const listed of file.listed) packages.push({ ecosystem: npm ? 'npm' : 'PyPI', ...listed, source: npm ? 'npm' : 'python', path: `/${path}`, layer_index: layer });
    }
  }
  packages.sort((a, b) => a.layer_index - b.layer_index || a.ecosystem.localeCompare(b.ecosystem) || a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
  // busybox, distroless-static and scratch images: no database, so no count of 0 should read as "nothing installed".
  if (![...files.keys()].some((path) => isDpkgStatus(path) || path === APK_INSTALLED)) {
    warnings.push(
      `The image has no OS package database this scan reads (/${DPKG_STATUS}, /${APK_INSTALLED}): what it installed otherwise (busybox, static binaries, RPM packages) is not seen; ${packages.length} package(s) come from language manifests alone`,
    );
  }
  return { os, packages, warnings };
}

function isDpkgStatus(path: string): boolean {
  return path === DPKG_STATUS || path.startsWith('var/lib/dpkg/status.d/');
}

/** `a/b/c` → `a`, `a/b`. */
function ancestors(path: string): string[] {
  const parts = path.split('/');
  return parts.slice(1).map((_, index) => parts.slice(0, index + 1).join('/'));
}

/** The packages of a database's last version, each with the layer since which it has been there at that version. */
function layered(versions: { layer: number; listed: Listed[] }[]): [Listed, number][] {
  const since = new Map<string, number>();
  let current: Listed[] = [];
  for (const { layer, listed } of versions) {
    current = listed;
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

function osRelease(text: string): Inventory['os'] {
  const value = (field: string) => new RegExp(`^${field}=(?:"([^"]*)"|(\\S*))`, 'm').exec(text)?.slice(1).find((part) => part !== undefined);
  const id = value('ID');
  return id ? { id, version: value('VERSION_ID') ?? '' } : null;
}

/** Binary packages of one source package at one version are one package to OSV. */
function dedupe(listed: Listed[]): Listed[] {
  return [...new Map(listed.map((entry) => [key(entry), entry])).values()];
}
