import { In, LessThan, type Repository } from 'typeorm';
import { OAuthRecord } from './oauth-record.entity';

/** What oidc-provider hands its adapter: the object's fields, of which these few are indexed. */
export interface OidcPayload {
  [field: string]: unknown;
  grantId?: string;
  uid?: string;
  userCode?: string;
  accountId?: string;
  consumed?: number;
}

/** The tools the account holder left ticked at consent, per grant: becomes every token's `tools` claim. */
export const GRANT_TOOLS_MODEL = 'GrantTools';

/** The models whose records belong to one grant: revoking the grant destroys them (docs/authorization.md#grants). */
const GRANT_BOUND_MODELS = ['AccessToken', 'AuthorizationCode', 'RefreshToken', 'Grant', GRANT_TOOLS_MODEL];

/**
 * oidc-provider's storage interface (its `adapter`) on the oauth_records table: one row per model
 * and id, so grants, refresh tokens and registered clients survive a restart and are shared by replicas.
 */
export class OAuthStore {
  constructor(
    private readonly records: Repository<OAuthRecord>,
    private readonly model: string,
  ) {}

  async upsert(id: string, payload: OidcPayload, expiresInSeconds?: number): Promise<void> {
    await this.records.upsert(
      {
        model: this.model,
        id,
        payload: payload as never,
        // A grant is its own: revoking it by id deletes it with its codes and tokens.
        grant_id: payload.grantId ?? (this.model === 'Grant' ? id : null),
        uid: payload.uid ?? null,
        account_id: typeof payload.accountId === 'string' ? payload.accountId : null,
        expires_at: expiresInSeconds ? new Date(Date.now() + expiresInSeconds * 1000) : null,
        consumed_at: null,
      },
      ['model', 'id'],
    );
  }

  async find(id: string): Promise<OidcPayload | undefined> {
    return this.live(await this.records.findOne({ where: { model: this.model, id } }));
  }

  async findByUid(uid: string): Promise<OidcPayload | undefined> {
    return this.live(await this.records.findOne({ where: { model: this.model, uid } }));
  }

  async findByUserCode(): Promise<undefined> {
    return undefined; // the device flow is not enabled
  }

  async consume(id: string): Promise<void> {
    await this.records.update({ model: this.model, id }, { consumed_at: new Date() });
  }

  async destroy(id: string): Promise<void> {
    await this.records.delete({ model: this.model, id });
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.records.delete({ grant_id: grantId, model: In(GRANT_BOUND_MODELS) });
  }

  /** An expired row reads as absent (oidc-provider expects that); the purge deletes it later. */
  private live(row: OAuthRecord | null): OidcPayload | undefined {
    if (!row || (row.expires_at && row.expires_at.getTime() <= Date.now())) return undefined;
    return row.consumed_at ? { ...row.payload, consumed: Math.floor(row.consumed_at.getTime() / 1000) } : row.payload;
  }
}

/** Deletes the rows whose lifetime has passed. */
export async function purgeExpiredOAuthRecords(records: Repository<OAuthRecord>, now = new Date()): Promise<void> {
  await records.delete({ expires_at: LessThan(now) });
}
