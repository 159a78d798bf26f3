import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppConfig } from '../config/app-config';
import type { Principal } from '../identity/principal';
import { accountLimits } from '../keys/account.entity';
import { ApiKey } from '../keys/api-key.entity';
import { KeyRevocations } from '../keys/key-revocations';
import { API_KEY_PATTERN, hashSecret } from '../identity/key-secret';

export type Verification = { ok: true; principal: Principal } | { ok: false; reason: 'malformed' | 'unknown' | 'revoked' | 'expired'; at?: Date };

interface CacheEntry {
  principal: Principal | null;
  until: number;
}

const MAX_ENTRIES = 10_000;
/** Unknown secrets are remembered briefly so guessing cannot hammer the database. */
const NEGATIVE_TTL_MS = 5_000;
/** last_used_at is written at most this often per key, off the request path. */
const LAST_USED_EVERY_MS = 60_000;

/**
 * Turns a bearer secret into a Principal. Verified keys are cached for AUTH_CACHE_TTL_SECONDS
 * so the hot path does not query the database; a revoke or rotate (KeyRevocations) drops a key at once in every process.
 */
@Injectable()
export class KeyVerifier implements BeforeApplicationShutdown {
  private readonly logger = new Logger(KeyVerifier.name);
  private readonly byHash = new Map<string, CacheEntry>();
  private readonly hashByKeyId = new Map<string, string>();
  private readonly inFlight = new Map<string, Promise<Principal | null>>();
  private readonly lastUsedWritten = new Map<string, number>();
  private readonly pendingWrites = new Set<Promise<unknown>>();
  private readonly ttlMs: number;

  constructor(
    @InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>,
    config: AppConfig,
    revocations: KeyRevocations,
  ) {
    this.ttlMs = config.AUTH_CACHE_TTL_SECONDS * 1000;
    revocations.onRevoked((keyId) => this.drop(keyId));
  }

  async verify(secret: string, now = new Date()): Promise<Verification> {
    if (!API_KEY_PATTERN.test(secret)) return { ok: false, reason: 'malformed' };
    const hash = hashSecret(secret);
    const principal = await this.lookup(hash, now.getTime());
    if (!principal) return { ok: false, reason: 'unknown' };
    if (principal.revokedAt && principal.revokedAt <= now) return { ok: false, reason: 'revoked', at: principal.revokedAt };
    if (principal.expiresAt && principal.expiresAt <= now) return { ok: false, reason: 'expired', at: principal.expiresAt };
    this.recordUse(principal.keyId, now);
    return { ok: true, principal };
  }

  private drop(keyId: string): void {
    const hash = this.hashByKeyId.get(keyId);
    if (hash) this.byHash.delete(hash);
    this.hashByKeyId.delete(keyId);
  }

  private async lookup(hash: string, now: number): Promise<Principal | null> {
    const cached = this.byHash.get(hash);
    if (cached && cached.until > now) return cached.principal;
    let pending = this.inFlight.get(hash);
    if (!pending) {
      pending = this.load(hash).finally(() => this.inFlight.delete(hash));
      this.inFlight.set(hash, pending);
    }
    const principal = await pending;
    this.remember(hash, principal, now);
    return principal;
  }

  private async load(hash: string): Promise<Principal | null> {
    const key = await this.keys.findOne({ where: { secret_hash: hash }, relations: { account: true } });
    if (!key?.account) return null;
    return {
      keyId: key.id,
      keyType: key.type,
      accountId: key.account_id,
      tier: key.account.tier,
      limits: accountLimits(key.account),
      scopes: new Set(key.scopes),
      toolIds: key.tool_ids ? new Set(key.tool_ids) : null,
      expiresAt: key.expires_at,
      revokedAt: key.revoked_at,
    };
  }

  private remember(hash: string, principal: Principal | null, now: number): void {
    if (this.ttlMs === 0) return;
    if (this.byHash.size >= MAX_ENTRIES) {
      const [oldestHash, oldest] = this.byHash.entries().next().value as [string, CacheEntry];
      this.byHash.delete(oldestHash);
      if (oldest.principal) this.hashByKeyId.delete(oldest.principal.keyId);
    }
    this.byHash.set(hash, { principal, until: now + (principal ? this.ttlMs : Math.min(this.ttlMs, NEGATIVE_TTL_MS)) });
    if (principal) this.hashByKeyId.set(principal.keyId, hash);
  }

  private recordUse(keyId: string, now: Date): void {
    const last = this.lastUsedWritten.get(keyId) ?? 0;
    if (now.getTime() - last < LAST_USED_EVERY_MS) return;
    if (this.lastUsedWritten.size >= MAX_ENTRIES) this.lastUsedWritten.clear();
    this.lastUsedWritten.set(keyId, now.getTime());
    const write = this.keys
      .update({ id: keyId }, { last_used_at: now })
      .catch((err: unknown) => this.logger.warn(`Could not record last use of ${keyId}: ${(err as Error).message}`))
      .finally(() => this.pendingWrites.delete(write));
    this.pendingWrites.add(write);
  }

  /** The database closes after this: let last-use writes already under way land first. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.pendingWrites);
  }
}
