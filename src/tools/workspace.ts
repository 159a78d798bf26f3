/**
 * The sandboxed view of WORKSPACE_ROOT that tools get as `ctx.workspace` (docs/writing-a-tool.md#what-a-tool-gets-the-context).
 *
 * Every path a client sends is relative to the root. Absolute paths, NUL bytes, `..` escapes
 * and symlinks whose real path leaves the root are refused with INVALID_INPUT, checked on the
 * real path (fs.realpath) of the target and of every file a listing returns.
 */
import { constants as fsConstants, type Dirent } from 'node:fs';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import * as path from 'node:path';
import type { Workspace, WorkspaceFile, WorkspaceListOptions } from './sdk/context';
import { compareText } from './sdk/collections';
import { ToolError } from './sdk/tool-error';

/** Directories a listing does not descend into unless told otherwise: VCS metadata and installed dependencies. */
const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules']);
const skippedByDefault = (workspacePath: string, kind: 'file' | 'directory') => kind === 'directory' && SKIPPED_DIRECTORIES.has(path.posix.basename(workspacePath));

export function createWorkspace(root: string): Workspace {
  const absoluteRoot = path.resolve(root);
  let realRoot: Promise<string> | undefined;

  /** The root's real path, resolved once: the root itself may be a symlink. */
  function getRealRoot(): Promise<string> {
    realRoot ??= realpath(absoluteRoot).catch((error: unknown) => {
      realRoot = undefined;
      throw new ToolError('The workspace root is not available on this server', { cause: error });
    });
    return realRoot;
  }

  function isInside(realRootPath: string, candidate: string): boolean {
    return candidate === realRootPath || candidate.startsWith(realRootPath + path.sep);
  }

  async function resolve(relativePath: string, parameter = 'path'): Promise<string> {
    checkRelative(relativePath, parameter);
    const base = await getRealRoot();
    const lexical = path.resolve(base, relativePath);
    if (!isInside(base, lexical)) throw invalidPath(parameter, relativePath, 'the path escapes the workspace');

    let real: string;
    try {
      real = await realpath(lexical);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        throw ToolError.invalidInput(
          parameter,
          'an existing path in the workspace',
          relativePath,
          `No such file or directory in the workspace: ${relativePath}`,
        );
      }
      if (code === 'ELOOP') throw invalidPath(parameter, relativePath, 'too many levels of symbolic links');
      if (code === 'ENAMETOOLONG') throw invalidPath(parameter, relativePath, 'the path or one of its names is too long');
      throw new ToolError(`Cannot access workspace path ${relativePath}`, { cause: error });
    }
    if (!isInside(base, real)) throw invalidPath(parameter, relativePath, 'a symbolic link points out of the workspace');
    return real;
  }

  async function readText(relativePath: string, maxBytes: number, parameter = 'path'): Promise<string> {
    const real = await resolve(relativePath, parameter);
    // One handle for the checks and the read, so the file checked is the file read;
    // O_NONBLOCK so that opening a FIFO fails the isFile check instead of hanging.
    const handle = await open(real, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    try {
      const info = await handle.stat();
      if (!info.isFile()) {
        throw ToolError.invalidInput(parameter, 'a regular file', relativePath, `Not a regular file: ${relativePath}`);
      }
      if (info.size > maxBytes) {
        throw ToolError.invalidInput(
          parameter,
          `a file of at most ${maxBytes} bytes`,
          relativePath,
          `File ${relativePath} is ${info.size} bytes, over the limit of ${maxBytes} bytes`,
        );
      }
      return await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  }

  async function listFiles(
    relativePath: string,
    options: WorkspaceListOptions = {},
    parameter = 'path',
  ): Promise<WorkspaceFile[]> {
    const base = await getRealRoot();
    const found = new Map<string, WorkspaceFile>();
    const maxFiles = options.maxFiles ?? Number.POSITIVE_INFINITY;
    const excluded = options.exclude ?? skippedByDefault;

    const add = (file: WorkspaceFile, limitParameter: string) => {
      if (options.maxFileBytes !== undefined && file.size > options.maxFileBytes) return;
      found.set(file.path, file);
      if (found.size > maxFiles) {
        throw ToolError.invalidInput(
          limitParameter,
          `at most ${maxFiles} files`,
          relativePath,
          `More than ${maxFiles} files under '${relativePath}'; narrow the path or list the files to scan`,
        );
      }
    };

    /** Adds an explicitly named path: a file, or a directory that is walked. */
    const addTarget = async (target: string, targetParameter: string) => {
      const real = await resolve(target, targetParameter);
      const info = await stat(real);
      const workspacePath = toWorkspacePath(base, path.resolve(base, target));
      if (info.isFile()) add({ path: workspacePath, size: info.size }, targetParameter);
      else if (info.isDirectory()) await walk(real, workspacePath, targetParameter);
    };

    /**
     * Walks a directory in name order. Symlinks are resolved and kept only when they point at a
     * regular file inside the root; symlinked directories are never followed (no escapes, no cycles).
     */
    const walk = async (realDirectory: string, workspaceDirectory: string, walkParameter: string) => {
      const entries = (await readdir(realDirectory, { withFileTypes: true })).sort(byName);
      for (const entry of entries) {
        const workspacePath = workspaceDirectory === '' ? entry.name : `${workspaceDirectory}/${entry.name}`;
        const entryPath = path.join(realDirectory, entry.name);
        if (entry.isDirectory()) {
          if (!excluded(workspacePath, 'directory')) await walk(entryPath, workspacePath, walkParameter);
        } else if (excluded(workspacePath, 'file')) {
          continue;
        } else if (entry.isFile()) {
          add({ path: workspacePath, size: (await stat(entryPath)).size }, walkParameter);
        } else if (entry.isSymbolicLink()) {
          const target = await realpath(entryPath).catch(() => undefined);
          if (target === undefined || !isInside(base, target)) continue;
          const info = await stat(target);
          if (info.isFile()) add({ path: workspacePath, size: info.size }, walkParameter);
        }
      }
    };

    if (options.files === undefined) {
      await addTarget(relativePath, parameter);
    } else {
      const directory = await resolve(relativePath, parameter);
      if (!(await stat(directory)).isDirectory()) {
        throw ToolError.invalidInput('files', `'${parameter}' to be a directory when files are listed`, relativePath);
      }
      for (const file of options.files) {
        checkRelative(file, 'files');
        const inDirectory = path.posix.normalize(file);
        if (inDirectory === '..' || inDirectory.startsWith('../')) {
          throw invalidPath('files', file, `the path escapes the listed directory '${relativePath}'`);
        }
        await addTarget(path.posix.join(relativePath, inDirectory), 'files');
      }
    }
    return [...found.values()].sort((a, b) => compareText(a.path, b.path));
  }

  return { root: absoluteRoot, resolve, readText, listFiles };
}

/** Refuses what can never be a workspace-relative path, before touching the file system. */
function checkRelative(relativePath: string, parameter: string): void {
  if (relativePath.includes('\0')) throw invalidPath(parameter, relativePath, 'the path contains a NUL byte');
  if (path.posix.isAbsolute(relativePath) || path.win32.isAbsolute(relativePath)) {
    throw invalidPath(parameter, relativePath, 'absolute paths are not allowed');
  }
}

function invalidPath(parameter: string, received: string, reason: string): ToolError {
  return ToolError.invalidInput(
    parameter,
    'a path relative to the workspace root',
    received,
    `Invalid '${parameter}' (${received}): ${reason}`,
  );
}

/** A lexical path inside the root as the workspace-relative, `/`-separated form clients see. */
function toWorkspacePath(realRoot: string, absolute: string): string {
  return path.relative(realRoot, absolute).split(path.sep).join('/');
}

function byName(a: Dirent, b: Dirent): number {
  return compareText(a.name, b.name);
}
