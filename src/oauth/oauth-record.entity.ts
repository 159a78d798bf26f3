import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One object of the built-in authorization server (docs/authorization.md#the-built-in-authorization-server):
 * a client, grant, code, session, interaction or token of oidc-provider, keyed by its model name and id.
 * The signing keys are a row too (model `SigningKeys`), their payload sealed with SECRETS_KEY.
 */
@Entity('oauth_records')
@Index('ix_oauth_records_grant', ['grant_id'])
@Index('ix_oauth_records_uid', ['uid'])
@Index('ix_oauth_records_account', ['account_id', 'model'])
@Index('ix_oauth_records_expires', ['expires_at'])
export class OAuthRecord {
  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_oauth_records' })
  model: string;

  @PrimaryColumn('text', { primaryKeyConstraintName: 'pk_oauth_records' })
  id: string;

  @Column('jsonb')
  payload: Record<string, unknown>;

  /** The grant a code or token belongs to: revoking the grant destroys them all. */
  @Column('text', { nullable: true })
  grant_id: string | null;

  /** An interaction's or session's uid, by which oidc-provider finds it. */
  @Column('text', { nullable: true })
  uid: string | null;

  /** The account (the subject) of a grant: what `GET /v1/oauth/grants` lists. */
  @Column('text', { nullable: true })
  account_id: string | null;

  @Column('timestamptz', { nullable: true })
  expires_at: Date | null;

  @Column('timestamptz', { nullable: true })
  consumed_at: Date | null;
}
