/**
 * Workspaces of an account: an uploaded archive checked and stored in the database, and unpacked
 * on demand into this process's cache (one folder per archive digest, shared by every execution
 * that reads it; one per commit for a `ref`) — the same for an API process running a sync call and a worker on another machine.
 */
import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, lstat, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { In, LessThan, type Repository } from 'typeorm';
import { AppException } from '../common/errors';
import { randomBase62 } from '../common/ids';
import { AppConfig } from '../config/app-config';
import { ToolError } from '../tools/sdk';
import { WORKSPACE_ID_PATTERN } from '../tools/workspace';
import { ArchiveRefused, readArchive, type ArchiveFormat } from './archive';
import { egressFor, EgressRefusedError, egressSettingsOf, type Egress } from '../tools/egress/egress';
import { git, GitFailed } from './git';
import { TreeCache } from './tree-cache';
import { WorkspaceRecord } from './workspace.entity';

const SWEEP_INTERVAL_MS = 60_000;
const GIT_TIMEOUT_MS = 60_000;
/** Unpacked trees of git commits are named `git-<sha>`; those of uploads by the archive's digest. */
const COMMIT_TREE = /^git-[0-9a-f]{40,64}$/;

export interface WorkspaceView {
  id: string;
  format: string;
  files: number;
  bytes: number;
  archive_bytes: number;
  digest: string;
  created_at: string;
  expires_at: string;
}

@Injectable()
export class WorkspacesService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(WorkspacesService.name);
  private sweeper?: NodeJS.Timeout;
  private readonly trees: TreeCache;
  private readonly egress: Egress;

  constructor(
    @InjectRepository(WorkspaceRecord) private readonly records: Repository<WorkspaceRecord>,
    private readonly config: AppConfig,
  ) {
    this.trees = new TreeCache(config.WORKSPACE_CACHE_DIR, this.limits());
    this.egress = egressFor(egressSettingsOf(config));
  }

  onModuleInit(): void {
    this.sweeper = setInterval(() => void this.sweep().catch((error: Error) => this.logger.warn(`workspace sweep failed: ${error.message}`)), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweeper);
  }

  /** Checks the whole archive (without writing it anywhere) and stores it. */
  async create(accountId: string, archive: Buffer, format: ArchiveFormat): Promise<WorkspaceView> {
    let counted: { files: number; bytes: number };
    try {
      counted = await readArchive(archive, format, this.limits(), async (entry) => {
        if (entry.kind === 'file') for await (const _chunk of entry.content) void _chunk;
      });
    } catch (error) {
      throw refused(error);
    }
    const now = new Date();
    const record = this.records.create({
      id: `ws_${randomBase62(20)}`,
      account_id: accountId,
      format,
      digest: createHash('sha256').update(archive).digest('hex'),
      files: counted.files,
      bytes: counted.bytes,
      archive_bytes: archive.length,
      archive,
      created_at: now,
      expires_at: new Date(now.getTime() + this.config.WORKSPACE_TTL_SECONDS * 1000),
    });
    await this.records.insert(record);
    return view(record);
  }

  /**
   * A workspace from a shallow clone (`--depth 1`, one branch, no tags) of a repository over HTTP(S).
   * The host is resolved and checked by the egress policy first, and git is pinned to that address
   * (curl's resolve list) with redirects off and every other protocol refused, so neither DNS
   * rebinding nor a redirect takes it elsewhere. The clone is then stored like an upload, with the
   * same limits; the clone itself is bounded by WORKSPACE_CLONE_TIMEOUT_SECONDS.
   */
  async clone(accountId: string, gitUrl: string, ref: string | undefined): Promise<WorkspaceView> {
    const url = cloneUrl(gitUrl);
    const target = await this.egress.resolve(url.hostname).catch((error: Error) => {
      throw invalid('git_url', 'an http(s) URL of a repository the egress policy allows', error instanceof EgressRefusedError ? error.message : `${url.hostname} cannot be resolved: ${error.message}`);
    });
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    const pinned = target.address.includes(':') ? `[${target.address}]` : target.address;
    const dir = await mkdtemp(path.join(tmpdir(), 'tos-clone-'));
    try {
      const options = { cwd: dir, timeoutMs: this.config.WORKSPACE_CLONE_TIMEOUT_SECONDS * 1000, maxBytes: 1024 * 1024 };
      const settings = ['protocol.allow=never', 'protocol.http.allow=always', 'protocol.https.allow=always', 'http.followRedirects=false', `http.curloptResolve=${url.hostname}:${port}:${pinned}`];
      await git([...settings.flatMap((setting) => ['-c', setting]), 'clone', '--quiet', '--depth', '1', '--single-branch', '--no-tags', ...(ref ? ['--branch', ref] : []), '--', url.href, 'tree'], options).catch((error: GitFailed) => {
        throw cloneFailure(error.message, url.href);
      });
      const archive = await tarGz(path.join(dir, 'tree'), this.config.WORKSPACE_MAX_BYTES);
      return await this.create(accountId, archive, 'tar.gz');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async list(accountId: string, limit: number, offset: number): Promise<{ workspaces: WorkspaceView[]; total: number }> {
    const [rows, total] = await this.records.findAndCount({ where: { account_id: accountId }, order: { created_at: 'DESC', id: 'DESC' }, take: limit, skip: offset });
    return { workspaces: rows.map(view), total };
  }

  async get(accountId: string, id: string): Promise<WorkspaceView> {
    return view(await this.find(accountId, id));
  }

  async delete(accountId: string, id: string): Promise<void> {
    const record = await this.find(accountId, id);
    await this.records.delete({ id: record.id, account_id: accountId });
  }

  /** The digest of a live workspace of this account (for result-cache keys); NOT_FOUND otherwise. */
  async digestOf(accountId: string, id: string): Promise<string> {
    return (await this.find(accountId, id)).digest;
  }

  /** The folder holding the workspace's files, unpacked into this process's cache when first needed. */
  async open(accountId: string, id: string): Promise<string> {
    const record = await this.find(accountId, id);
    return this.trees.open(record.digest, async () => {
      const { archive } = await this.records.findOneOrFail({ where: { id: record.id }, select: { id: true, archive: true } });
      return { archive: archive as Buffer, format: record.format as ArchiveFormat };
    });
  }

  /**
   * The files of the git repository at `root` as they are at `ref`, unpacked beside the uploads
   * (`git archive` of the resolved commit: the work tree is never touched). git reads the objects
   * and refs through a git directory of our own with an empty config, so a hostile repository's
   * config (filter drivers, fsmonitor, archive commands) never runs, and one with alternates or a
   * .git file pointing elsewhere is refused: it could read objects outside the workspace.
   */
  async openAtRef(root: string, ref: string): Promise<string> {
    const refused = (why: string) => ToolError.invalidInput('ref', 'a branch, tag or commit of the workspace repository', ref, why);
    const gitDir = path.join(root, '.git');
    const entry = await lstat(gitDir).catch(() => undefined);
    if (!entry?.isDirectory()) throw refused(`The workspace is not a git repository (no .git folder at its root), so '${ref}' names nothing`);
    for (const pointer of ['objects/info/alternates', 'commondir']) {
      if (await lstat(path.join(gitDir, pointer)).then(() => true, () => false)) throw refused(`The workspace repository borrows objects from elsewhere (.git/${pointer}); send a self-contained clone`);
    }
    const sealed = await mkdtemp(path.join(tmpdir(), 'tos-gitdir-'));
    try {
      // Folders linked, small files copied (git reads a linked HEAD as a legacy symbolic ref).
      await symlink(path.join(gitDir, 'objects'), path.join(sealed, 'objects'));
      await symlink(path.join(gitDir, 'refs'), path.join(sealed, 'refs'));
      for (const file of ['HEAD', 'packed-refs']) await copyFile(path.join(gitDir, file), path.join(sealed, file)).catch(() => undefined);
      await writeFile(path.join(sealed, 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = true\n');
      const run = (args: string[]) => git([`--git-dir=${sealed}`, ...args], { cwd: root, timeoutMs: GIT_TIMEOUT_MS, maxBytes: this.config.WORKSPACE_MAX_UNPACKED_BYTES });
      const commit = (await run(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]).catch(() => {
        throw refused(`No commit '${ref}' in the workspace repository`);
      })).toString('utf8').trim();
      return await this.trees.open(`git-${commit}`, async () => ({ archive: await run(['archive', '--format=tar', commit]), format: 'tar' }));
    } finally {
      await rm(sealed, { recursive: true, force: true });
    }
  }

  /** Removes expired workspaces, the unpacked copies no live workspace names, and commit trees older than the TTL. */
  async sweep(now = new Date()): Promise<number> {
    const { affected } = await this.records.delete({ expires_at: LessThan(now) });
    if (affected) this.logger.log(`removed ${affected} expired workspace(s)`);
    const unpacked = (await readdir(this.config.WORKSPACE_CACHE_DIR).catch(() => [] as string[])).filter((name) => /^[0-9a-f]{64}$/.test(name));
    if (unpacked.length > 0) {
      const live = new Set((await this.records.find({ where: { digest: In(unpacked) }, select: { digest: true } })).map((record) => record.digest));
      for (const digest of unpacked.filter((name) => !live.has(name))) await rm(path.join(this.config.WORKSPACE_CACHE_DIR, digest), { recursive: true, force: true });
    }
    for (const name of (await readdir(this.config.WORKSPACE_CACHE_DIR).catch(() => [] as string[])).filter((entry) => COMMIT_TREE.test(entry))) {
      const folder = path.join(this.config.WORKSPACE_CACHE_DIR, name);
      const { mtimeMs } = await stat(folder);
      if (now.getTime() - mtimeMs > this.config.WORKSPACE_TTL_SECONDS * 1000) await rm(folder, { recursive: true, force: true });
    }
    return affected ?? 0;
  }

  private async find(accountId: string, id: string): Promise<WorkspaceRecord> {
    const record = WORKSPACE_ID_PATTERN.test(id) ? await this.records.findOne({ where: { id, account_id: accountId } }) : null;
    // Another account's workspace is as unknown as a missing one.
    if (!record || record.expires_at.getTime() <= Date.now()) throw AppException.notFound('Workspace', id);
    return record;
  }

  private limits() {
    return { maxFiles: this.config.WORKSPACE_MAX_FILES, maxBytes: this.config.WORKSPACE_MAX_UNPACKED_BYTES };
  }
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

/** The tree (with its shallow .git, so `ref` works on it) as a .tar.gz of at most maxBytes. */
function tarGz(dir: string, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    execFile('tar', ['czf', '-', '-C', dir, '.'], { encoding: 'buffer', maxBuffer: maxBytes }, (error, stdout) => {
      if (!error) return resolve(stdout);
      reject(invalid('git_url', 'a repository of at most WORKSPACE_MAX_BYTES compressed', `The clone is larger than WORKSPACE_MAX_BYTES (${maxBytes} bytes compressed)`));
    }),
  );
}

function refused(error: unknown): unknown {
  if (!(error instanceof ArchiveRefused)) return error;
  return new AppException('INVALID_INPUT', error.message, { details: { parameter: 'body', expected: 'a .tar.gz or .zip archive of a source tree' } });
}

function view(record: WorkspaceRecord): WorkspaceView {
  return {
    id: record.id,
    format: record.format,
    files: record.files,
    bytes: record.bytes,
    archive_bytes: record.archive_bytes,
    digest: `sha256:${record.digest}`,
    created_at: record.created_at.toISOString(),
    expires_at: record.expires_at.toISOString(),
  };
}

