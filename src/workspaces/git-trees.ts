/**
 * Workspaces from git: a shallow clone over HTTP(S) under the egress policy, and the tree of a
 * commit of a workspace repository. git runs without a shell, without system or user config,
 * without prompts, bounded in time and output, with refs after `--end-of-options`.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { copyFile, lstat, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppException } from '../common/errors';
import { ToolError } from '../tools/sdk';
import type { Egress } from '../tools/egress/egress';
import { EgressRefusedError } from '../tools/sdk/network-errors';
import type { TreeCache } from './tree-cache';
import { ArchiveRefused } from './tree-shape';

const GIT_TIMEOUT_MS = 60_000;

class GitFailed extends Error {}

/**
 * A shallow clone (`--depth 1`, one branch, no tags) of a repository over HTTP(S), as an archive.
 * The host is resolved and checked by the egress policy first, and git is pinned to that address
 * (curl's resolve list) with redirects off and every other protocol refused, so neither DNS
 * rebinding nor a redirect takes it elsewhere. git never checks the tree out (`--no-checkout`):
 * the repository's paths are written only by the confined unpacker, after the archive checks,
 * never by git. The tree (from `git archive`) and the shallow .git git wrote come back as one
 * .tar.gz of at most `maxBytes`, to be stored like an upload.
 */
export async function cloneArchive(gitUrl: string, ref: string | undefined, options: { egress: Egress; timeoutMs: number; maxBytes: number }): Promise<Buffer> {
  const url = cloneUrl(gitUrl);
  const target = await options.egress.resolve(url.hostname).catch((error: Error) => {
    throw invalid('git_url', 'an http(s) URL of a repository the egress policy allows', error instanceof EgressRefusedError ? error.message : `${url.hostname} cannot be resolved: ${error.message}`);
  });
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const pinned = target.address.includes(':') ? `[${target.address}]` : target.address;
  const dir = await mkdtemp(path.join(tmpdir(), 'tos-clone-'));
  try {
    const settings = ['protocol.allow=never', 'protocol.http.allow=always', 'protocol.https.allow=always', 'http.followRedirects=false', `http.curloptResolve=${url.hostname}:${port}:${pinned}`];
    await git([...settings.flatMap((setting) => ['-c', setting]), 'clone', '--quiet', '--no-checkout', '--depth', '1', '--single-branch', '--no-tags', ...(ref ? ['--branch', ref] : []), '--', url.href, 'tree'], { cwd: dir, timeoutMs: options.timeoutMs, maxBytes: 1024 * 1024 }).catch((error: GitFailed) => {
      throw cloneFailure(error.message, url.href);
    });
    const clone = path.join(dir, 'tree');
    await git(['archive', '--format=tar', `--output=${path.join(dir, 'tree.tar')}`, 'HEAD'], { cwd: clone, timeoutMs: options.timeoutMs, maxBytes: 1024 * 1024 });
    return await withGitDirGzipped(path.join(dir, 'tree.tar'), clone, options.maxBytes);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The files of the git repository at `root` as they are at `ref`, unpacked beside the uploads
 * (`git archive` of the resolved commit: the work tree is never touched). git reads the objects
 * and refs through a git directory of our own with an empty config, so a hostile repository's
 * config (filter drivers, fsmonitor, archive commands) never runs, and one with alternates or a
 * .git file pointing elsewhere is refused: it could read objects outside the workspace.
 */
export async function commitTree(root: string, ref: string, trees: TreeCache, maxBytes: number): Promise<string> {
  const refused = (why: string) => ToolError.invalidInput('ref', 'a branch, tag or commit of the workspace repository', ref, why);
  const gitDir = path.join(root, '.git');
  const entry = await lstat(gitDir).catch(() => undefined);
  if (!entry?.isDirectory()) throw refused(`The workspace is not a git repository (no .git folder at its root), so '${ref}' names nothing`);
  const why = await unsealable(gitDir);
  if (why) throw refused(why);
  const sealed = await mkdtemp(path.join(tmpdir(), 'tos-gitdir-'));
  try {
    // Folders linked (checked above to hold only real folders and files), small files copied
    // (git reads a linked HEAD as a legacy symbolic ref).
    await symlink(path.join(gitDir, 'objects'), path.join(sealed, 'objects'));
    await symlink(path.join(gitDir, 'refs'), path.join(sealed, 'refs'));
    for (const file of ['HEAD', 'packed-refs']) await copyFile(path.join(gitDir, file), path.join(sealed, file)).catch(() => undefined);
    await writeFile(path.join(sealed, 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = true\n');
    const run = (args: string[]) => git([`--git-dir=${sealed}`, ...args], { cwd: root, timeoutMs: GIT_TIMEOUT_MS, maxBytes });
    const commit = (await run(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]).catch(() => {
      throw refused(`No commit '${ref}' in the workspace repository`);
    })).toString('utf8').trim();
    const load = async () => {
      const file = path.join(sealed, 'tree.tar');
      await gitToFile([`--git-dir=${sealed}`, 'archive', '--format=tar', commit], file, { cwd: root, timeoutMs: GIT_TIMEOUT_MS, maxBytes });
      return { archive: { file }, format: 'tar' as const };
    };
    return await trees.open(`git-${commit}`, load).catch((error: unknown) => {
      if (error instanceof TreeTooLarge) throw refused(`The tree of '${ref}' is larger than WORKSPACE_MAX_UNPACKED_BYTES (${maxBytes} bytes as a tar)`);
      throw error instanceof ArchiveRefused ? refused(`The tree of '${ref}' is refused: ${error.message}`) : error;
    });
  } finally {
    await rm(sealed, { recursive: true, force: true });
  }
}

/**
 * Why the repository's git directory cannot be sealed, or undefined: what git would read through
 * it must be real folders and files of the workspace. A link anywhere in objects or refs (or as
 * HEAD, packed-refs, info, modules) could make git read another repository on the host; alternates
 * and commondir borrow objects from elsewhere.
 */
async function unsealable(gitDir: string): Promise<string | undefined> {
  for (const pointer of ['objects/info/alternates', 'objects/info/http-alternates', 'commondir']) {
    if (await lstat(path.join(gitDir, pointer)).then(() => true, () => false)) return `The workspace repository borrows objects from elsewhere (.git/${pointer}); send a self-contained clone`;
  }
  for (const name of ['HEAD', 'packed-refs', 'info', 'modules', 'worktrees']) {
    if ((await lstat(path.join(gitDir, name)).catch(() => undefined))?.isSymbolicLink()) return `.git/${name} is a symbolic link; the repository's git directory must hold its own files`;
  }
  for (const folder of ['objects', 'refs']) {
    const link = await firstNonPlain(path.join(gitDir, folder));
    if (link !== undefined) return `.git/${path.relative(gitDir, link) || folder} is not a plain folder or file; the repository's git directory must hold its own files`;
  }
  return undefined;
}

/** The first entry under `folder` (or the folder itself) that is not a real folder or regular file. */
async function firstNonPlain(folder: string): Promise<string | undefined> {
  const info = await lstat(folder).catch(() => undefined);
  if (!info) return undefined; // git says itself that there is no such repository
  if (!info.isDirectory()) return folder;
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const at = path.join(folder, entry.name);
    if (entry.isDirectory()) {
      const found = await firstNonPlain(at);
      if (found !== undefined) return found;
    } else if (!entry.isFile()) return at;
  }
  return undefined;
}

function invalid(parameter: string, expected: string, message: string): AppException {
  return new AppException('INVALID_INPUT', message, { details: { parameter, expected } });
}

function cloneUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid('git_url', 'an http(s) URL', `'${text.slice(0, 200)}' is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('git_url', 'an http(s) URL', `Only http and https clones are supported, not ${url.protocol}`);
  // Credentials would end up in git's messages: private repositories are not supported yet.
  if (url.username || url.password) throw invalid('git_url', 'a URL without credentials', 'The URL carries credentials; they are not accepted');
  return url;
}

/** git's word on a failed clone: what the caller named wrong, a timeout, or an upstream failure (retryable). */
function cloneFailure(message: string, url: string): AppException {
  if (/Remote branch .* not found/i.test(message)) return invalid('ref', 'a branch or tag of the repository', message);
  if (/repository .* not found|not found|404/i.test(message)) return invalid('git_url', 'a repository that exists', message);
  if (/took longer than/.test(message)) return new AppException('TOOL_TIMEOUT', `Cloning ${url}: ${message}`, { retryable: true });
  return new AppException('TOOL_ERROR', `Cloning ${url} failed: ${message}`, { status: 502, retryable: true });
}

/** The tree's tar with the clone's shallow .git appended (so `ref` works on it), as a .tar.gz of at most maxBytes. */
async function withGitDirGzipped(treeTar: string, clone: string, maxBytes: number): Promise<Buffer> {
  await new Promise<void>((resolve, reject) => execFile('tar', ['--append', '-f', treeTar, '-C', clone, '.git'], (error) => (error ? reject(error) : resolve())));
  return new Promise((resolve, reject) =>
    execFile('gzip', ['-c', treeTar], { encoding: 'buffer', maxBuffer: maxBytes }, (error, stdout) => {
      if (!error) return resolve(stdout);
      reject(invalid('git_url', 'a repository of at most WORKSPACE_MAX_BYTES compressed', `The clone is larger than WORKSPACE_MAX_BYTES (${maxBytes} bytes compressed)`));
    }),
  );
}

/** git's environment: no system or user config, no prompts. */
const GIT_ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir(), GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', LANG: 'C' };

/** What git said went wrong: its `fatal:` line, else its first. */
function gitSaid(stderr: Buffer): string {
  const lines = stderr.toString('utf8').trim().split('\n');
  return (lines.find((line) => line.startsWith('fatal:')) ?? lines[0] ?? '').replace(/^fatal: /, '');
}

/** git with no shell, no system or user config and no prompts; its `fatal:` line is the error. */
function git(args: readonly string[], options: { cwd: string; timeoutMs: number; maxBytes: number }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile('git', [...args], { cwd: options.cwd, timeout: options.timeoutMs, maxBuffer: options.maxBytes, encoding: 'buffer', env: GIT_ENV }, (error, stdout, stderr) => {
      if (!error) return resolve(stdout);
      reject(new GitFailed(error.killed ? `git took longer than ${options.timeoutMs / 1000}s` : gitSaid(stderr) || error.message));
    });
  });
}

/**
 * git's output written to `file` rather than held in memory, stopped past `maxBytes` (a small
 * repository can hold a commit whose tree is gigabytes: blobs are compressed) with `TreeTooLarge`.
 */
async function gitToFile(args: readonly string[], file: string, options: { cwd: string; timeoutMs: number; maxBytes: number }): Promise<void> {
  const child = spawn('git', [...args], { cwd: options.cwd, env: GIT_ENV, timeout: options.timeoutMs, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr: Buffer[] = [];
  child.stderr.on('data', (chunk: Buffer) => stderr.length < 16 && stderr.push(chunk));
  const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
  let written = 0;
  const meter = new Transform({
    transform: (chunk: Buffer, _encoding, done) => {
      written += chunk.length;
      done(written > options.maxBytes ? new TreeTooLarge() : null, chunk);
    },
  });
  try {
    await pipeline(child.stdout, meter, createWriteStream(file, { flags: 'wx' }));
  } catch (error) {
    child.kill();
    throw error;
  }
  const [code, signal] = await exited;
  if (code !== 0) throw new GitFailed(signal ? `git took longer than ${options.timeoutMs / 1000}s` : gitSaid(Buffer.concat(stderr)));
}

class TreeTooLarge extends Error {}
