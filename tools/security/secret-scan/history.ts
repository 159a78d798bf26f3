/**
 * Secrets in a repository's history: every blob reachable from a commit, scanned once per path,
 * at the oldest commit (by commit time) whose tree holds it there — where its secrets came in. The object
 * store is read with isomorphic-git (pure JavaScript: an isolated tool may not start git), through
 * a file system confined to the repository's .git folder.
 */
import { realpath } from 'node:fs/promises';
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { ToolError } from '@tos/sdk';
import { scanText, type Engines, type Finding, type Heuristics } from './findings';
import { HISTORY_LIMITS } from './limits';
import { isBinary } from './text';

export interface HistoryScan {
  findings: Finding[];
  commits: number;
  blobs: number;
  /** A bound (HISTORY_LIMITS) or the findings cap stopped the walk early. */
  truncated: boolean;
}

export interface HistoryOptions {
  /** Absolute real path of the repository's .git folder (inside the workspace). */
  gitdir: string;
  /** Prefix of reported paths (the scanned directory, workspace-relative; '' for the root). */
  prefix: string;
  ref: string;
  heuristics: Heuristics;
  engines: Engines;
  maxFindings: number;
  signal: AbortSignal;
  now?: () => number;
}

export async function scanHistory(options: HistoryOptions): Promise<HistoryScan> {
  return walkHistory(options).catch((error: unknown) => {
    // An object missing, or only reachable through a link out of .git (confinedFs reads nothing there).
    if ((error as { code?: string }).code !== 'NotFoundError') throw error;
    const where = `${options.prefix || '.'}/.git`;
    throw ToolError.invalidInput('path', 'a directory holding a self-contained .git folder (history)', options.prefix || '.', `The repository's objects could not be read inside ${where}: ${(error as Error).message}`);
  });
}

async function walkHistory(options: HistoryOptions): Promise<HistoryScan> {
  const git = await import('isomorphic-git');
  const now = options.now ?? Date.now;
  const deadline = now() + HISTORY_LIMITS.ms;
  const repo = { fs: confinedFs(options.gitdir), gitdir: options.gitdir, cache: {} };
  const head = await git.resolveRef({ ...repo, ref: options.ref }).catch(() => {
    throw ToolError.invalidInput('history_ref', 'a branch, tag or commit of the repository', options.ref, `No commit '${options.ref}' in ${options.prefix || '.'}/.git`);
  });
  const log = await git.log({ ...repo, ref: head, depth: HISTORY_LIMITS.commits + 1 });
  // isomorphic-git's walk can list a commit twice after a merge; each is scanned once.
  const unique = [...new Map(log.map((entry) => [entry.oid, entry])).values()];
  let truncated = unique.length > HISTORY_LIMITS.commits;
  // Oldest first: a blob is scanned at the first commit that holds it.
  const commits = unique.slice(0, HISTORY_LIMITS.commits).sort((a, b) => a.commit.committer.timestamp - b.commit.committer.timestamp);
  const seenBlobs = new Set<string>();
  const seenTrees = new Set<string>();
  const reported = new Set<string>();
  const findings: Finding[] = [];
  let bytes = 0;
  let commitsScanned = 0;

  walk: for (const { oid: commit, commit: body } of commits) {
    commitsScanned += 1;
    const pending: Array<{ oid: string; dir: string }> = [{ oid: body.tree, dir: '' }];
    while (pending.length > 0) {
      const { oid: treeOid, dir } = pending.pop()!;
      // An unchanged folder at the same place holds no new file version.
      if (seenTrees.has(`${dir}\0${treeOid}`)) continue;
      seenTrees.add(`${dir}\0${treeOid}`);
      const { tree } = await git.readTree({ ...repo, oid: treeOid });
      for (const entry of tree) {
        options.signal.throwIfAborted();
        const file = dir ? `${dir}/${entry.path}` : entry.path;
        if (entry.type === 'tree') pending.push({ oid: entry.oid, dir: file });
        // Links and submodules are never followed; only regular files are scanned.
        // A version is scanned once per path: rules depend on the path, and a copy elsewhere is a leak too.
        const version = `${file}\0${entry.oid}`;
        if (entry.type !== 'blob' || entry.mode === '120000' || seenBlobs.has(version)) continue;
        if (seenBlobs.size >= HISTORY_LIMITS.blobs || bytes >= HISTORY_LIMITS.bytes || now() > deadline) {
          truncated = true;
          break walk;
        }
        seenBlobs.add(version);
        const { blob } = await git.readBlob({ ...repo, oid: entry.oid });
        bytes += blob.byteLength;
        if (blob.byteLength > HISTORY_LIMITS.blobBytes) continue;
        const text = Buffer.from(blob).toString('utf8');
        if (isBinary(text)) continue;
        const shown = options.prefix ? `${options.prefix}/${file}` : file;
        const lines = text.split('\n');
        for (const finding of await scanText(text, shown, options.heuristics, options.engines)) {
          // The same secret on the same line in a later version of the file is not new.
          const key = `${shown}\0${finding.rule}\0${lines[finding.line - 1].trim()}`;
          if (reported.has(key)) continue;
          reported.add(key);
          findings.push({ ...finding, commit });
        }
        if (findings.length > options.maxFindings) break walk;
      }
    }
  }
  return { findings, commits: commitsScanned, blobs: seenBlobs.size, truncated };
}

/**
 * The read-only `fs` isomorphic-git is given: every path must lie inside the .git folder once
 * links are resolved, so a link or an alternates file cannot make it read outside the workspace.
 */
function confinedFs(gitdir: string) {
  const inside = async (file: string): Promise<string> => {
    const real = await realpath(file);
    if (real !== gitdir && !real.startsWith(gitdir + nodePath.sep)) {
      throw Object.assign(new Error(`ENOENT: outside the repository: ${file}`), { code: 'ENOENT' });
    }
    return real;
  };
  const refuse = () => Promise.reject(Object.assign(new Error('EROFS: the history scan only reads'), { code: 'EROFS' }));
  return {
    promises: {
      readFile: async (file: string, options?: unknown) => fs.promises.readFile(await inside(file), options as undefined),
      readdir: async (dir: string) => fs.promises.readdir(await inside(dir)),
      stat: async (file: string) => fs.promises.stat(await inside(file)),
      lstat: async (file: string) => fs.promises.lstat(await inside(file)),
      readlink: refuse,
      writeFile: refuse,
      unlink: refuse,
      mkdir: refuse,
      rmdir: refuse,
      symlink: refuse,
      chmod: refuse,
    },
  };
}
