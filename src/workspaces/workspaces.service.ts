/**
 * Workspaces of an account: an uploaded archive checked and stored in the database, and unpacked
 * on demand into this process's cache (one folder per archive digest, shared by every execution
 * that reads it; one per commit for a `ref`) — the same for an API process running a sync call and
 * a worker on another machine.
 */
import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { readdir, rm, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { In, LessThan, MoreThan, type EntityManager, type Repository } from 'typeorm';
import { AppException } from '../common/errors';
import { randomBase62 } from '../common/ids';
import { AppConfig } from '../config/app-config';
import type { Principal } from '../identity/principal';
import type { TierLimits } from '../identity/tiers';
import { Account } from '../keys/account.entity';
import { WORKSPACE_ID_PATTERN } from '../tools/sdk/workspace-inputs';
import { ToolError } from '../tools/sdk';
import { ArchiveRefused, readArchive, type ArchiveFormat } from './archive';
import { EgressPool, egressSettingsOf, type Egress } from '../tools/egress/egress';
import { cloneArchive, commitTree } from './git-trees';
import { TreeCache } from './tree-cache';
import { workspaceCacheDir } from './cache-dir';
import { WorkspaceChunk, WorkspaceRecord } from './workspace.entity';

const SWEEP_INTERVAL_MS = 60_000;
/** Unpacked trees of git commits are named `git-<sha>`; those of uploads by the archive's digest. */
const COMMIT_TREE = /^git-[0-9a-f]{40,64}$/;
/**
 * Archive bytes per stored chunk. Each is one short statement: on the embedded database, whose one
 * connection is held for a statement's whole length, other accounts' queries wait behind one
 * chunk, not behind a 50 MiB archive.
 */
const CHUNK_BYTES = 1024 * 1024;

/** Whose workspace it is, and the quotas that account has. */
export type WorkspaceOwner = Pick<Principal, 'accountId'> & { limits: Pick<TierLimits, 'workspaces' | 'workspaceBytes'> };

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
    @InjectRepository(WorkspaceChunk) private readonly chunks: Repository<WorkspaceChunk>,
    private readonly config: AppConfig,
    egresses: EgressPool,
  ) {
    this.trees = new TreeCache(workspaceCacheDir(config), this.limits());
    this.egress = egresses.for(egressSettingsOf(config));
  }

  onModuleInit(): void {
    this.sweeper = setInterval(() => void this.sweep().catch((error: Error) => this.logger.warn(`workspace sweep failed: ${error.message}`)), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweeper);
    this.trees.close();
  }

  /**
   * Takes the upload's place in the account's quotas, checks the whole archive (without writing it
   * anywhere), then stores it chunk by chunk; it is usable once all are written. A refusal names
   * `parameter`, where the archive came from.
   */
  async create(owner: WorkspaceOwner, archive: Buffer, format: ArchiveFormat, parameter: 'body' | 'git_url' = 'body'): Promise<WorkspaceView> {
    const now = new Date();
    const record = this.records.create({
      id: `ws_${randomBase62(20)}`,
      account_id: owner.accountId,
      format,
      digest: '',
      files: 0,
      bytes: 0,
      archive_bytes: archive.length,
      ready: false,
      created_at: now,
      expires_at: new Date(now.getTime() + this.config.WORKSPACE_TTL_SECONDS * 1000),
    });
    await this.records.manager.transaction((manager) => this.reserve(manager, owner, record));
    try {
      const counted = await readArchive(archive, format, this.limits(), async (entry) => {
        if (entry.kind === 'file') for await (const _chunk of entry.content) void _chunk;
      }).catch((error: unknown) => Promise.reject(refused(error, parameter)));
      const hash = createHash('sha256');
      for (let seq = 0; seq * CHUNK_BYTES < archive.length; seq++) {
        const data = archive.subarray(seq * CHUNK_BYTES, (seq + 1) * CHUNK_BYTES);
        hash.update(data);
        await this.chunks.insert({ workspace_id: record.id, seq, data });
      }
      Object.assign(record, { files: counted.files, bytes: counted.bytes, digest: hash.digest('hex'), ready: true });
      await this.records.update({ id: record.id }, { files: record.files, bytes: record.bytes, digest: record.digest, ready: true });
    } catch (error) {
      await this.records.delete({ id: record.id }).catch(() => undefined); // frees its place in the quota
      throw error;
    }
    return view(record);
  }

  /**
   * Inserts the (not yet ready) record if the account's live workspaces leave room for it: 429 when
   * their number is at its quota, 413 when its archive would take their stored bytes past theirs.
   * The account's row is locked meanwhile, so concurrent uploads of one account count each other.
   */
  private async reserve(manager: EntityManager, owner: WorkspaceOwner, record: WorkspaceRecord): Promise<void> {
    await manager.getRepository(Account).createQueryBuilder('account').setLock('pessimistic_write').where('account.id = :id', { id: owner.accountId }).getOne();
    const used = await manager
      .getRepository(WorkspaceRecord)
      .createQueryBuilder('w')
      .select('count(*)::int', 'count')
      .addSelect('coalesce(sum(w.archive_bytes), 0)::bigint', 'bytes')
      .addSelect('min(w.expires_at)', 'next_expiry')
      .where('w.account_id = :id AND w.expires_at > :now', { id: owner.accountId, now: record.created_at })
      .getRawOne<{ count: number; bytes: string; next_expiry: Date | string | null }>();
    const { workspaces, workspaceBytes } = owner.limits;
    const count = used?.count ?? 0;
    const bytes = Number(used?.bytes ?? 0);
    if (count >= workspaces) {
      const retryAfter = Math.max(1, Math.ceil((new Date(used!.next_expiry!).getTime() - record.created_at.getTime()) / 1000));
      throw new AppException('RATE_LIMITED', `Workspace quota reached: the account has ${count} of its ${workspaces} workspaces; delete one, or retry when the oldest expires in ${retryAfter}s`, {
        retry_after: retryAfter,
        details: { quota: 'workspaces', limit: workspaces, used: count },
      });
    }
    if (bytes + record.archive_bytes > workspaceBytes) {
      throw new AppException(
        'INVALID_REQUEST',
        `Workspace storage quota exceeded: this archive is ${record.archive_bytes} bytes and the account's workspaces already store ${bytes} of its ${workspaceBytes}; delete workspaces to make room`,
        { status: 413, details: { quota: 'workspace_bytes', limit: workspaceBytes, used: bytes, requested: record.archive_bytes } },
      );
    }
    await manager.insert(WorkspaceRecord, record);
  }

  /** A workspace from a shallow clone of a repository over HTTP(S) (see cloneArchive), stored like an upload. */
  async clone(owner: WorkspaceOwner, gitUrl: string, ref: string | undefined): Promise<WorkspaceView> {
    const archive = await cloneArchive(gitUrl, ref, { egress: this.egress, timeoutMs: this.config.WORKSPACE_CLONE_TIMEOUT_SECONDS * 1000, maxBytes: this.config.WORKSPACE_MAX_BYTES });
    return this.create(owner, archive, 'tar.gz', 'git_url');
  }

  async list(accountId: string, limit: number, offset: number): Promise<{ workspaces: WorkspaceView[]; total: number }> {
    const [rows, total] = await this.records.findAndCount({ where: { account_id: accountId, ready: true, expires_at: MoreThan(new Date()) }, order: { created_at: 'DESC', id: 'DESC' }, take: limit, skip: offset });
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
      // Chunk by chunk, like the upload: no statement holds the connection for the whole archive.
      const parts: Buffer[] = [];
      for (let seq = 0; seq * CHUNK_BYTES < record.archive_bytes; seq++) {
        parts.push((await this.chunks.findOneOrFail({ where: { workspace_id: record.id, seq } })).data);
      }
      return { archive: Buffer.concat(parts), format: record.format as ArchiveFormat };
    }).catch((error: unknown) => {
      // Stored before today's checks: refused now as an upload of it would be.
      throw error instanceof ArchiveRefused ? ToolError.invalidInput('workspace', 'a workspace whose archive passes the upload checks', id, `Workspace ${id} cannot be unpacked: ${error.message}`) : error;
    });
  }

  /** The files of the git repository at `root` as they are at `ref` (see commitTree). */
  openAtRef(root: string, ref: string): Promise<string> {
    return commitTree(root, ref, this.trees, this.config.WORKSPACE_MAX_UNPACKED_BYTES);
  }

  /** Removes expired workspaces, the unpacked copies no live workspace names, and commit trees older than the TTL. */
  async sweep(now = new Date()): Promise<number> {
    const { affected } = await this.records.delete({ expires_at: LessThan(now) });
    if (affected) this.logger.log(`removed ${affected} expired workspace(s)`);
    const cache = this.trees.dir;
    const unpacked = (await readdir(cache).catch(() => [] as string[])).filter((name) => /^[0-9a-f]{64}$/.test(name));
    if (unpacked.length > 0) {
      const live = new Set((await this.records.find({ where: { digest: In(unpacked) }, select: { digest: true } })).map((record) => record.digest));
      for (const digest of unpacked.filter((name) => !live.has(name))) await rm(path.join(cache, digest), { recursive: true, force: true });
    }
    for (const name of (await readdir(cache).catch(() => [] as string[])).filter((entry) => COMMIT_TREE.test(entry))) {
      const folder = path.join(cache, name);
      const { mtimeMs } = await stat(folder);
      if (now.getTime() - mtimeMs > this.config.WORKSPACE_TTL_SECONDS * 1000) await rm(folder, { recursive: true, force: true });
    }
    return affected ?? 0;
  }

  private async find(accountId: string, id: string): Promise<WorkspaceRecord> {
    const record = WORKSPACE_ID_PATTERN.test(id) ? await this.records.findOne({ where: { id, account_id: accountId, ready: true } }) : null;
    // Another account's workspace is as unknown as a missing one.
    if (!record || record.expires_at.getTime() <= Date.now()) throw AppException.notFound('Workspace', id);
    return record;
  }

  private limits() {
    return { maxFiles: this.config.WORKSPACE_MAX_FILES, maxBytes: this.config.WORKSPACE_MAX_UNPACKED_BYTES };
  }
}

function refused(error: unknown, parameter: 'body' | 'git_url'): unknown {
  if (!(error instanceof ArchiveRefused)) return error;
  const expected = parameter === 'body' ? 'a .tar.gz or .zip archive of a source tree' : 'a repository whose tree passes the archive checks';
  return new AppException('INVALID_INPUT', error.message, { details: { parameter, expected } });
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

