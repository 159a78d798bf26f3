/**
 * The licence of each locked npm package as far as the workspace tells: the lockfile's own
 * `license` (npm lockfile v2+), else an installed package.json of the locked version — anywhere in
 * the installed tree, nested installs (`node_modules/x/node_modules/y`) included, as
 * license-checker reads it — else a linked package (npm workspaces, pnpm's node_modules/.pnpm store).
 */
import * as path from 'node:path';
import { ToolError, type Workspace } from '@tos/sdk';
import { readOptional, type LockedPackage, type Lockfile } from '../lockfiles';

export type LicenseSource = 'lockfile' | 'installed' | 'registry';

export interface KnownLicense {
  /** The declared licence as written (an SPDX expression, a name, `SEE LICENSE IN …`). */
  license: string;
  source: LicenseSource;
}

/** Most package.json files read from one installed tree. */
export const MAX_INSTALLED_MANIFESTS = 50_000;

/** Licences found for a lockfile's packages, by package key; packages not found are absent. */
export async function installedLicenses(workspace: Workspace, lockfile: Lockfile, signal: AbortSignal): Promise<Map<string, KnownLicense>> {
  const found = new Map<string, KnownLicense>();
  const directory = path.posix.dirname(lockfile.file);
  let installed: Map<string, string> | undefined;
  for (const entry of lockfile.packages) {
    signal.throwIfAborted();
    if (entry.license) {
      found.set(entry.key, { license: entry.license, source: 'lockfile' });
      continue;
    }
    if (lockfile.ecosystem !== 'npm') continue;
    // The tree is read once, and only when some package needs it.
    installed ??= await installedTree(workspace, directory, signal);
    const license = installed.get(entry.key) ?? (await linkedLicense(workspace, directory, entry));
    if (license) found.set(entry.key, { license, source: 'installed' });
  }
  return found;
}

/**
 * Declared licences by `name@version` of every package installed under `<directory>/node_modules`,
 * at any depth: each package folder's package.json, and the `node_modules` inside package folders.
 * Nothing else is walked (not a package's own files, not symlinked folders).
 */
async function installedTree(workspace: Workspace, directory: string, signal: AbortSignal): Promise<Map<string, string>> {
  const root = path.posix.join(directory, 'node_modules');
  const below = (file: string) => file.slice(root.length + 1).split('/');
  try {
    await workspace.resolve(root);
  } catch (error) {
    // No node_modules (or one reached through a link out of the workspace): nothing is installed here.
    if (error instanceof ToolError && error.code === 'INVALID_INPUT') return new Map();
    throw error;
  }
  const manifests = await workspace.listFiles(root, {
    maxFiles: MAX_INSTALLED_MANIFESTS,
    exclude: (file, kind) => (kind === 'directory' ? placeInTree(below(file)) === 'outside' : path.posix.basename(file) !== 'package.json' || placeInTree(below(file).slice(0, -1)) !== 'package'),
  });
  const licenses = new Map<string, string>();
  for (const { path: file } of manifests) {
    signal.throwIfAborted();
    const manifest = parsedManifest(await readOptional(workspace, file));
    const license = manifest && declaredLicense(manifest);
    if (manifest && license && typeof manifest.name === 'string' && typeof manifest.version === 'string') {
      const key = `${manifest.name}@${manifest.version}`;
      if (!licenses.has(key)) licenses.set(key, license);
    }
  }
  return licenses;
}

/**
 * Where folders below a node_modules stand: a package folder (`x`, `@scope/x`, and again after each
 * nested `node_modules`), on the way to one (`@scope`, a nested `node_modules`), or outside (a
 * package's own files).
 */
function placeInTree(segments: readonly string[]): 'package' | 'on-the-way' | 'outside' {
  let at = 0;
  for (;;) {
    if (at === segments.length) return 'on-the-way';
    if (segments[at].startsWith('@') && ++at === segments.length) return 'on-the-way';
    if (++at === segments.length) return 'package';
    if (segments[at++] !== 'node_modules') return 'outside';
  }
}

/**
 * Where a walk does not go, as the package manager links it: a top-level package that is a symlink
 * (npm workspaces), and pnpm's node_modules/.pnpm store; read when the version is the locked one.
 */
async function linkedLicense(workspace: Workspace, directory: string, entry: LockedPackage): Promise<string | undefined> {
  const candidates = [
    `node_modules/${entry.name}/package.json`,
    `node_modules/.pnpm/${entry.name.replace('/', '+')}@${entry.version}/node_modules/${entry.name}/package.json`,
  ];
  for (const candidate of candidates) {
    const manifest = parsedManifest(await readOptional(workspace, path.posix.join(directory, candidate)));
    if (manifest?.version === entry.version) return declaredLicense(manifest);
  }
  return undefined;
}

/** A package.json's object, or undefined when absent or broken (a broken one tells nothing). */
function parsedManifest(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The licence a package.json declares: `license` as a string, or the deprecated object and
 * `licenses` array forms (several of them joined with OR, as npm documents).
 */
export function declaredLicense(manifest: Record<string, unknown>): string | undefined {
  const typeOf = (value: unknown) => (typeof value === 'string' ? value : typeof (value as { type?: unknown })?.type === 'string' ? (value as { type: string }).type : undefined);
  const single = typeOf(manifest.license);
  if (single) return single.trim();
  const several = Array.isArray(manifest.licenses) ? manifest.licenses.map(typeOf).filter((value): value is string => Boolean(value)) : [];
  if (several.length === 1) return several[0];
  return several.length > 1 ? `(${several.join(' OR ')})` : undefined;
}
