/**
 * An image of one npm package installed in this repository (a published MCP server) on
 * NODE_BASE_IMAGE: the package and the packages it depends on, copied from node_modules as npm
 * laid them out, so nothing is fetched. Its entrypoint runs the package's `bin` with node.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { NODE_BASE_IMAGE } from '../deploy/node-image';
import { buildFixtureImage } from './docker-engine';

const ROOT = path.join(__dirname, '..', '..', '..');
const IN_IMAGE = '/opt/mcp';

interface Manifest {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  bin?: string | Record<string, string>;
}

const manifestOf = (folder: string): Manifest => JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')) as Manifest;

/** Where node finds `name` from `folder`: its node_modules, then each parent's up to the repository's. */
function resolvePackage(name: string, folder: string): string | undefined {
  for (let at = folder; at.startsWith(ROOT); at = path.dirname(at)) {
    const candidate = path.join(at, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (at === ROOT) break;
  }
  return undefined;
}

/** The folders of `name` and everything it needs (optional dependencies when installed). */
export function packageClosure(name: string): string[] {
  const found = new Set<string>();
  const visit = (folder: string) => {
    if (found.has(folder)) return;
    found.add(folder);
    const manifest = manifestOf(folder);
    for (const dependency of Object.keys(manifest.dependencies ?? {})) {
      const resolved = resolvePackage(dependency, folder);
      if (!resolved) throw new Error(`${dependency} (needed by ${path.relative(ROOT, folder)}) is not installed`);
      visit(resolved);
    }
    for (const dependency of Object.keys(manifest.optionalDependencies ?? {})) {
      const resolved = resolvePackage(dependency, folder);
      if (resolved) visit(resolved);
    }
  };
  const top = resolvePackage(name, ROOT);
  if (!top) throw new Error(`${name} is not installed`);
  visit(top);
  return [...found];
}

/** Builds `tag` on the engine: the package's closure under /opt/mcp/node_modules, run as `node <bin>` by the image's own non-root user. */
export async function buildPackageImage(docker: Docker, name: string, tag: string): Promise<string> {
  const context = mkdtempSync(path.join(tmpdir(), 'tos-package-image-'));
  try {
    for (const folder of packageClosure(name)) cpSync(folder, path.join(context, path.relative(ROOT, folder)), { recursive: true, dereference: true });
    const manifest = manifestOf(path.join(ROOT, 'node_modules', name));
    const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0];
    if (!bin) throw new Error(`${name} has no bin`);
    const entry = path.posix.join(IN_IMAGE, 'node_modules', name, bin);
    writeFileSync(path.join(context, 'Dockerfile'), [`FROM ${NODE_BASE_IMAGE}`, `COPY node_modules ${IN_IMAGE}/node_modules`, 'USER 1000:1000', `ENTRYPOINT ["node", "${entry}"]`, ''].join('\n'));
    return await buildFixtureImage(docker, context, tag);
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
}
