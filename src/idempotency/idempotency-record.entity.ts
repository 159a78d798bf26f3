import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** A claimed X-Idempotency-Key (docs/API.md#idempotent-retries): scope is API key + tool; kept 24 h. */
@Entity('idempotency_keys')
@Index('idx_idempotency_keys_expires_at', ['expires_at'])
export class IdempotencyRecord {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_idempotency_keys' })
  key_id: string;

  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_idempotency_keys' })
  tool_id: string;

  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_idempotency_keys' })
  idempotency_key: string;

  /** SHA-256 of the request (body and options): the same key with another request is refused. */
  @Column('text')
  request_hash: string;

  /** Null while the first request is in flight. */
  @Column('integer', { nullable: true })
  response_status: number | null;

  @Column('jsonb', { nullable: true })
  response_body: Record<string, unknown> | null;

  @Column('timestamptz')
  created_at: Date;

  @Column('timestamptz')
  expires_at: Date;
}
