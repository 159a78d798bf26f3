import { Injectable, Optional } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull, Repository } from 'typeorm';
import { defaultScopes, Scope } from '../identity/scopes';
import { AppException } from '../common/errors';
import { newKeyId } from '../common/ids';
import { ApiKey } from './api-key.entity';
import { generateSecret, hashSecret, KeyType } from '../identity/key-secret';
import { KnownTools } from '../tools/known-tools';
import { KeyRevocations } from './key-revocations';
import { generateSigningSecret } from '../identity/request-signature';
import { SigningSecretVault } from './signing-secret-vault';

export const MAX_TEMPORARY_KEY_SECONDS = 86_400;

export interface NewKey {
  name: string;
  type: KeyType;
  /** Seconds; required for temporary keys, at most 24 h. */
  expires_in?: number;
  scopes?: Scope[];
  tool_ids?: string[] | null;
  /** Requests made with the key must be signed (docs/API.md#signed-requests). */
  require_signature?: boolean;
}

/** What the creating key holds; a key can never grant more (docs/API.md#keys-and-scopes). Absent for operators. */
export interface Grantor {
  scopes: ReadonlySet<Scope>;
  toolIds: ReadonlySet<string> | null;
}

export interface IssuedKey {
  record: ApiKey;
  /** Shown once; only its SHA-256 is stored. */
  secret: string;
  /** Keys that require signed requests: their signing secret, shown once; stored sealed. */
  signingSecret: string | null;
}

@Injectable()
export class ApiKeysService {
  constructor(
    @InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>,
    private readonly dataSource: DataSource,
    private readonly revocations: KeyRevocations,
    private readonly knownTools: KnownTools,
    @Optional() private readonly vault?: SigningSecretVault,
  ) {}

  async create(accountId: string, request: NewKey, grantor?: Grantor, now = new Date()): Promise<IssuedKey> {
    const { type } = request;
    if (type === 'temporary' && request.expires_in === undefined) {
      throw AppException.invalidRequest('Temporary keys need expires_in (seconds, at most 86400)', { parameter: 'expires_in', expected: 'integer 1..86400' });
    }
    if (type !== 'temporary' && request.expires_in !== undefined) {
      throw AppException.invalidRequest('expires_in applies to temporary keys only; user and service keys do not expire', { parameter: 'expires_in' });
    }
    const scopes = request.scopes ?? defaultScopes(type);
    const credentialScope = type === 'temporary' ? scopes.find((scope) => !defaultScopes('temporary').includes(scope)) : undefined;
    if (credentialScope) throw new AppException('FORBIDDEN', `Temporary keys cannot hold the ${credentialScope} scope`);
    // Here rather than in a door: the REST API, the console and the operator CLI all create keys.
    const unknownTool = await this.knownTools.firstUnknown(accountId, request.tool_ids ?? []);
    if (unknownTool) throw AppException.invalidRequest(`Unknown tool in tool_ids: ${unknownTool}`, { parameter: 'tool_ids' });
    const toolIds = request.tool_ids ?? (grantor?.toolIds ? [...grantor.toolIds] : null);
    if (grantor) assertWithinGrant(grantor, scopes, toolIds);
    const expiresAt = request.expires_in === undefined ? null : new Date(now.getTime() + request.expires_in * 1000);
    return this.issue(this.keys.manager, { account_id: accountId, name: request.name, type, scopes, tool_ids: toolIds, expires_at: expiresAt }, request.require_signature === true, now);
  }

  async list(accountId: string, limit: number, offset: number): Promise<{ keys: ApiKey[]; total: number }> {
    const [keys, total] = await this.keys.findAndCount({
      where: { account_id: accountId },
      order: { created_at: 'DESC', id: 'DESC' },
      take: limit,
      skip: offset,
    });
    return { keys, total };
  }

  async get(accountId: string, keyId: string): Promise<ApiKey> {
    const key = await this.keys.findOneBy({ id: keyId, account_id: accountId });
    if (!key) throw AppException.notFound('API key', keyId);
    return key;
  }

  /** Revokes at once. Temporary keys only expire (docs/API.md#keys). Revoking twice answers the same record. */
  async revoke(accountId: string, keyId: string, now = new Date()): Promise<ApiKey> {
    const key = await this.get(accountId, keyId);
    if (key.type === 'temporary') {
      throw new AppException('FORBIDDEN', `Temporary keys cannot be revoked; this one expires at ${key.expires_at?.toISOString()}`);
    }
    if (key.revoked_at && key.revoked_at <= now) return key;
    key.revoked_at = now;
    await this.keys.update({ id: key.id }, { revoked_at: now });
    this.revocations.announce(key.id);
    return key;
  }

  /** User keys: a new secret, and the old one stops working at once. */
  async regenerate(accountId: string, keyId: string, grantor?: Grantor, now = new Date()): Promise<IssuedKey> {
    return this.replace(accountId, keyId, grantor, now, (old) => {
      if (old.type !== 'user') {
        throw AppException.invalidRequest(`Only user keys can be regenerated; this is a ${old.type} key${old.type === 'service' ? ' (rotate it instead)' : ''}`);
      }
      return now;
    });
  }

  /**
   * Service keys: a new key; the old one stays valid until revoked, or for `revokeOldAfter` seconds.
   * A key has at most one successor pending: rotating it again is a CONFLICT naming that successor.
   */
  async rotate(accountId: string, keyId: string, revokeOldAfter: number | undefined, grantor?: Grantor, now = new Date()): Promise<IssuedKey & { old: ApiKey }> {
    return this.replace(accountId, keyId, grantor, now, (old) => {
      if (old.type !== 'service') {
        throw AppException.invalidRequest(`Only service keys can be rotated; this is a ${old.type} key${old.type === 'user' ? ' (regenerate it instead)' : ''}`);
      }
      return revokeOldAfter === undefined ? null : new Date(now.getTime() + revokeOldAfter * 1000);
    });
  }

  /** Registers a secret the operator chose (BOOTSTRAP_API_KEY) unless it is already known. */
  async ensureServiceKey(accountId: string, name: string, secret: string): Promise<ApiKey> {
    const hash = hashSecret(secret);
    await this.keys
      .createQueryBuilder()
      .insert()
      .values({ ...describeSecret(secret), id: newKeyId(), account_id: accountId, name, type: 'service', scopes: defaultScopes('service'), tool_ids: null, secret_hash: hash })
      .orIgnore()
      .execute();
    return this.keys.findOneByOrFail({ secret_hash: hash });
  }

  count(): Promise<number> {
    return this.keys.count();
  }

  /**
   * Issues the successor of an active key and schedules the old key's revocation, in one
   * transaction that holds the old row locked, so two concurrent calls cannot both succeed. The
   * successor holds exactly the old key's scopes and tools: the caller must hold them all too.
   */
  private async replace(
    accountId: string,
    keyId: string,
    grantor: Grantor | undefined,
    now: Date,
    revocationOf: (old: ApiKey) => Date | null,
  ): Promise<IssuedKey & { old: ApiKey }> {
    const result = await this.dataSource.transaction(async (manager) => {
      const old = await manager.findOne(ApiKey, { where: { id: keyId, account_id: accountId }, lock: { mode: 'pessimistic_write' } });
      if (!old) throw AppException.notFound('API key', keyId);
      if ((old.revoked_at && old.revoked_at <= now) || (old.expires_at && old.expires_at <= now)) {
        throw new AppException('CONFLICT', `API key ${keyId} is already revoked or expired`);
      }
      const revokeOldAt = revocationOf(old);
      if (grantor) assertWithinGrant(grantor, old.scopes, old.tool_ids);
      const pending = await manager.findOne(ApiKey, { where: { replaces_key_id: old.id, revoked_at: IsNull() } });
      if (pending) {
        throw new AppException('CONFLICT', `API key ${keyId} already has a successor, ${pending.id}; revoke that one first to rotate again`, {
          details: { successor_id: pending.id },
        });
      }
      if (revokeOldAt) await manager.update(ApiKey, { id: old.id }, { revoked_at: revokeOldAt });
      old.revoked_at = revokeOldAt;
      const issued = await this.issue(
        manager,
        { account_id: old.account_id, name: old.name, type: old.type, scopes: old.scopes, tool_ids: old.tool_ids, expires_at: null, replaces_key_id: old.id },
        // The successor of a signing key signs too, with a new secret: this is how a signing secret rotates.
        old.signing_secret_sealed !== null,
        now,
      );
      return { ...issued, old };
    });
    this.revocations.announce(keyId);
    return result;
  }

  private async issue(manager: EntityManager, fields: Partial<ApiKey> & { type: KeyType; account_id: string }, signs: boolean, now: Date): Promise<IssuedKey> {
    const secret = generateSecret(fields.type);
    const id = newKeyId();
    const signingSecret = signs ? generateSigningSecret() : null;
    const sealed = signingSecret ? this.sealSigningSecret(fields.account_id, id, signingSecret) : null;
    const record = manager.create(ApiKey, {
      replaces_key_id: null,
      ...fields,
      ...describeSecret(secret),
      id,
      secret_hash: hashSecret(secret),
      signing_secret_sealed: sealed?.sealed ?? null,
      signing_secret_key_id: sealed?.key_id ?? null,
      created_at: now,
      revoked_at: null,
      last_used_at: null,
    });
    await manager.insert(ApiKey, record);
    return { record, secret, signingSecret };
  }

  private sealSigningSecret(accountId: string, keyId: string, signingSecret: string) {
    if (!this.vault) {
      throw new AppException('INTERNAL_ERROR', 'Signed requests are not available in this process: it holds no secrets key', { status: 501, retryable: false });
    }
    return this.vault.sealSigningSecret(accountId, keyId, signingSecret);
  }
}

function describeSecret(secret: string): Pick<ApiKey, 'prefix' | 'last4'> {
  return { prefix: secret.slice(0, 12), last4: secret.slice(-4) };
}

function assertWithinGrant(grantor: Grantor, scopes: Scope[], toolIds: string[] | null): void {
  const extraScope = scopes.find((scope) => !grantor.scopes.has(scope));
  if (extraScope) throw new AppException('FORBIDDEN', `Cannot grant scope '${extraScope}': the calling key does not hold it`);
  if (grantor.toolIds) {
    if (!toolIds) throw new AppException('FORBIDDEN', 'Cannot grant access to all tools: the calling key is restricted to some');
    const extraTool = toolIds.find((id) => !grantor.toolIds!.has(id));
    if (extraTool) throw new AppException('FORBIDDEN', `Cannot grant tool '${extraTool}': the calling key may not use it`);
  }
}
