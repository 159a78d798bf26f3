/**
 * The licence of each locked npm package as far as the workspace tells: the lockfile's own
 * `license` (npm lockfile v2+), else the installed package.json (node_modules, or pnpm's
 * node_modules/.pnpm store) when its version is the locked one.
 */
import * as path from 'node:path';
import type { Workspace } from '@tos/sdk';
import { readOptional, type LockedPackage, type Lockfile } from '../lockfiles';

export type LicenseSource = 'lockfile' | 'installed' | 'registry';

export interface KnownLicense {
  /** The declared licence as written (an SPDX expression, a name, `SEE LICENSE IN …`). */
  license: string;
  source: LicenseSource;
}

/** Licences found for a lockfile's packages, by package key; packages not found are absent. */
export async function installedLicenses(workspace: Workspace, lockfile: Lockfile, signal: AbortSignal): Promise<Map<string, KnownLicense>> {
  const found = new Map<string, KnownLicense>();
  const directory = path.posix.dirname(lockfile.file);
  for (const entry of lockfile.packages) {
    signal.throwIfAborted();
    if (entry.license) {
      found.set(entry.key, { license: entry.license, source: 'lockfile' });
      continue;
    }
    if (lockfile.ecosystem !== 'npm') continue;
    const installed = await installedManifest(workspace, directory, entry);
    const license = installed && declaredLicense(installed);
    if (license) found.set(entry.key, { license, source: 'installed' });
  }
  return found;
}

async function installedManifest(workspace: Workspace, directory: string, entry: LockedPackage): Promise<Record<string, unknown> | undefined> {
  const candidates = [
    `node_modules/${entry.name}/package.json`,
    `node_modules/.pnpm/${entry.name.replace('/', '+')}@${entry.version}/node_modules/${entry.name}/package.json`,
  ];
  for (const candidate of candidates) {
    const text = await readOptional(workspace, path.posix.join(directory, candidate));
    if (text === undefined) continue;
    try {
      const manifest = JSON.parse(text) as Record<string, unknown>;
      if (manifest.version === entry.version) return manifest;
    } catch {
      // A broken package.json tells nothing: the next place may.
    }
  }
  return undefined;
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
