/**
 * Lockfiles of a workspace path, parsed into one model (model.ts) shared by dependency-check,
 * license-check and sbom-generate.
 */
import * as path from 'node:path';
import { ToolError, type Workspace } from '@tos/sdk';
import { parseGoMod, parseGoSum } from './go-sum';
import type { Ecosystem, Lockfile, LockfileFormat, Manifest } from './model';
import { parsePackageLock } from './package-lock';
import { parseRequirements } from './requirements';

export * from './model';
export { normalisePypiName } from './requirements';

/** Lockfiles of real projects reach tens of MiB; beyond this one is refused. */
export const MAX_LOCKFILE_BYTES = 32 * 1024 * 1024;
const MAX_MANIFEST_BYTES = 1024 * 1024;
/** Files a directory walk may meet (node_modules and .git are never walked). */
const MAX_LISTED_FILES = 20_000;
/** Lockfiles one call reads. */
export const MAX_LOCKFILES = 50;

const FORMATS: ReadonlyArray<{ matches: (name: string) => boolean; format: LockfileFormat; ecosystem: Ecosystem; manifest?: string }> = [
  { matches: (name) => name === 'package-lock.json' || name === 'npm-shrinkwrap.json', format: 'package-lock', ecosystem: 'npm', manifest: 'package.json' },
  { matches: (name) => name === 'yarn.lock', format: 'yarn', ecosystem: 'npm', manifest: 'package.json' },
  { matches: (name) => name === 'pnpm-lock.yaml', format: 'pnpm', ecosystem: 'npm' },
  { matches: (name) => /^requirements([-_.][\w.-]*)?\.txt$/.test(name), format: 'requirements', ecosystem: 'PyPI' },
  { matches: (name) => name === 'go.sum', format: 'go.sum', ecosystem: 'Go', manifest: 'go.mod' },
];

/** What reading a lockfile needs of ctx.workspace. */
export type FileReader = Pick<Workspace, 'readText'>;

export const LOCKFILE_NAMES_TEXT = 'package-lock.json, npm-shrinkwrap.json, yarn.lock, pnpm-lock.yaml, requirements*.txt or go.sum';

const formatOf = (file: string) => FORMATS.find((candidate) => candidate.matches(path.posix.basename(file)));

/** The lockfiles at `target` (a lockfile, or a directory walked for them), sorted by path. */
export async function findLockfiles(workspace: Workspace, target: string, parameter = 'path'): Promise<string[]> {
  // No size filter here: a lockfile over the limit is refused by name when read, never skipped unseen.
  const files = await workspace.listFiles(target, { maxFiles: MAX_LISTED_FILES }, parameter);
  const lockfiles = files.map((file) => file.path).filter((file) => formatOf(file) !== undefined);
  if (files.length === 1 && lockfiles.length === 0 && files[0].path === path.posix.normalize(target)) {
    throw ToolError.invalidInput(parameter, `a lockfile (${LOCKFILE_NAMES_TEXT}) or a directory holding some`, target);
  }
  if (lockfiles.length === 0) throw ToolError.invalidInput(parameter, `a path holding a lockfile (${LOCKFILE_NAMES_TEXT})`, target, `No lockfile found under '${target}'`);
  if (lockfiles.length > MAX_LOCKFILES) {
    throw ToolError.invalidInput(parameter, `at most ${MAX_LOCKFILES} lockfiles`, target, `More than ${MAX_LOCKFILES} lockfiles under '${target}'; narrow the path`);
  }
  return lockfiles;
}

/** Reads and parses one lockfile (and the manifest beside it, when there is one). */
export async function readLockfile(workspace: FileReader, file: string, parameter = 'path'): Promise<Lockfile> {
  const kind = formatOf(file);
  if (!kind) throw ToolError.invalidInput(parameter, `a lockfile (${LOCKFILE_NAMES_TEXT})`, file);
  const text = await workspace.readText(file, MAX_LOCKFILE_BYTES, parameter);
  const manifestText = kind.manifest ? await readOptional(workspace, path.posix.join(path.posix.dirname(file), kind.manifest)) : undefined;
  try {
    const manifest = manifestText === undefined ? undefined : kind.format === 'go.sum' ? parseGoMod(manifestText) : packageManifest(manifestText);
    const parsed = await parse(kind.format, text, manifest);
    return { file, format: kind.format, ecosystem: kind.ecosystem, ...parsed };
  } catch (error) {
    if (error instanceof ToolError) throw error;
    throw ToolError.invalidInput(parameter, `a readable ${kind.format} lockfile`, file, `Cannot parse ${file}: ${(error as Error).message}`);
  }
}

/** The YAML and Syml parsers load with the first lockfile that needs them, not with the catalogue. */
async function parse(format: LockfileFormat, text: string, manifest: Manifest | undefined) {
  switch (format) {
    case 'package-lock':
      return parsePackageLock(JSON.parse(text), manifest);
    case 'yarn':
      return (await import('./yarn-lock')).parseYarnLock(text, manifest);
    case 'pnpm':
      return (await import('./pnpm-lock')).parsePnpmLock(text);
    case 'requirements':
      return parseRequirements(text);
    case 'go.sum':
      return parseGoSum(text, manifest);
  }
}

function packageManifest(text: string): Manifest {
  const json = JSON.parse(text) as Record<string, unknown>;
  const record = (value: unknown) => (value && typeof value === 'object' ? (value as Record<string, string>) : {});
  return {
    name: typeof json.name === 'string' ? json.name : undefined,
    version: typeof json.version === 'string' ? json.version : undefined,
    dependencies: { ...record(json.dependencies), ...record(json.optionalDependencies) },
    devDependencies: record(json.devDependencies),
  };
}

/** A workspace file's text, or undefined when it is not there (or not readable inside the sandbox). */
export async function readOptional(workspace: FileReader, file: string, maxBytes = MAX_MANIFEST_BYTES): Promise<string | undefined> {
  try {
    return await workspace.readText(file, maxBytes);
  } catch (error) {
    if (error instanceof ToolError && error.code === 'INVALID_INPUT') return undefined;
    throw error;
  }
}

/**
 * For each package, the shortest chain of packages from a direct dependency down to it
 * (`['express@4.17.1', 'qs@6.7.0']`). Packages no root reaches get just themselves.
 */
export function dependencyPaths(lockfile: Lockfile): Map<string, string[]> {
  const byKey = new Map(lockfile.packages.map((entry) => [entry.key, entry]));
  const paths = new Map<string, string[]>();
  const queue: string[] = [];
  for (const entry of lockfile.packages) {
    if (!entry.direct) continue;
    paths.set(entry.key, [entry.key]);
    queue.push(entry.key);
  }
  for (let index = 0; index < queue.length; index += 1) {
    const from = paths.get(queue[index])!;
    for (const next of byKey.get(queue[index])!.dependencies) {
      if (paths.has(next)) continue;
      paths.set(next, [...from, next]);
      queue.push(next);
    }
  }
  for (const entry of lockfile.packages) if (!paths.has(entry.key)) paths.set(entry.key, [entry.key]);
  return paths;
}
