/**
 * The npm cache an offline `npm ci` installs from: an image build's RUN steps have no network here,
 * so the build image carries this machine's npm cache and runs npm with `offline` set. npm ci needs
 * each locked package's tarball and install metadata there (the lockfile names no tarball URLs:
 * omit-lockfile-registry-resolved); what the cache lacks is fetched into it first with
 * `npm cache add` (the ordinary client, the npm registry).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

interface LockedPackage {
  /** The real name of an alias (`string-width-cjs` is `npm:string-width@…`). */
  name?: string;
  version?: string;
  integrity?: string;
  link?: boolean;
  optional?: boolean;
  inBundle?: boolean;
}

/** Where cacache keeps content with this integrity (`sha512-<base64>`), relative to `_cacache`. */
function contentPath(integrity: string): string {
  const [algorithm, digest] = integrity.split(/\s+/)[0].split(/-(.*)/s);
  const hex = Buffer.from(digest, 'base64').toString('hex');
  return path.join('content-v2', algorithm, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
}

/** The abbreviated metadata npm ci asks for (its Accept header), as opposed to the full document `npm view` reads. */
const INSTALL_METADATA = 'application/vnd.npm.install-v1+json';

/** Whether the cache holds `name`'s install metadata from `registry` (make-fetch-happen's index entry for its URL). */
function hasInstallMetadata(cache: string, registry: string, name: string): boolean {
  const key = `make-fetch-happen:request-cache:${registry}${name.replace('/', '%2f')}`;
  const hash = createHash('sha256').update(key).digest('hex');
  const bucket = path.join(cache, '_cacache', 'index-v5', hash.slice(0, 2), hash.slice(2, 4), hash.slice(4));
  if (!existsSync(bucket)) return false;
  return readFileSync(bucket, 'utf8')
    .split('\n')
    .some((line) => {
      try {
        const entry = JSON.parse(line.slice(line.indexOf('\t') + 1)) as { key: string; metadata?: { reqHeaders?: { accept?: string } } };
        return entry.key === key && !!entry.metadata?.reqHeaders?.accept?.includes(INSTALL_METADATA);
      } catch {
        return false;
      }
    });
}

/** This machine's npm cache folder (npm_config_cache), made to hold every package `lockfile` locks. */
export function npmCacheFor(lockfile: string): string {
  const cache = execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).trim();
  const registry = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim().replace(/\/?$/, '/');
  const { packages } = JSON.parse(readFileSync(lockfile, 'utf8')) as { packages: Record<string, LockedPackage> };
  // Optional packages for other platforms may be on no registry at all: npm ci skips them anyway.
  const missing = Object.entries(packages)
    .filter(([key, entry]) => key !== '' && !entry.link && !entry.inBundle && !entry.optional && entry.integrity)
    .map(([key, entry]) => ({ name: entry.name ?? key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length), entry }))
    .filter(({ name, entry }) => !existsSync(path.join(cache, '_cacache', contentPath(entry.integrity!))) || !hasInstallMetadata(cache, registry, name))
    .map(({ name, entry }) => `${name}@${entry.version}`);
  if (missing.length > 0) execFileSync('npm', ['cache', 'add', ...missing], { stdio: ['ignore', 'ignore', 'inherit'] });
  return cache;
}
