import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Account } from '../keys/account.entity';

/**
 * An uploaded workspace. The archive itself is kept in the database every process shares (in
 * WorkspaceChunk rows), so whichever worker runs an execution can unpack it (docs/ARCHITECTURE.md#api-and-worker-roles: workers
 * on any machine).
 */
@Entity('workspaces')
@Index('ix_workspaces_account_created', ['account_id', 'created_at'])
@Index('ix_workspaces_expires', ['expires_at'])
export class WorkspaceRecord {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_workspaces' })
  id: string;

  @Column('text')
  account_id: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_workspaces_account' })
  account?: Account;

  @Column('text')
  format: string;

  /** SHA-256 (hex) of the archive: names the unpacked copy and enters result-cache keys. */
  @Column('text')
  digest: string;

  @Column('integer')
  files: number;

  /** Unpacked size. */
  @Column('bigint', { transformer: { to: (value: number) => value, from: (value: string) => Number(value) } })
  bytes: number;

  @Column('integer')
  archive_bytes: number;

  /** False while its chunks are being written: not usable yet, but counted in the account's quota. */
  @Column('boolean', { default: true })
  ready: boolean;

  @Column('timestamptz')
  created_at: Date;

  @Column('timestamptz')
  expires_at: Date;
}

/** One piece of a workspace's archive, in order of `seq`: an upload is many short inserts, not one long one. */
@Entity('workspace_chunks')
export class WorkspaceChunk {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_workspace_chunks' })
  workspace_id: string;

  @PrimaryColumn('integer', { primaryKeyConstraintName: 'pk_workspace_chunks' })
  seq: number;

  @ManyToOne(() => WorkspaceRecord, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'fk_workspace_chunks_workspace' })
  workspace?: WorkspaceRecord;

  @Column('bytea')
  data: Buffer;
}
