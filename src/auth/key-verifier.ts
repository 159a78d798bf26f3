import { BeforeApplicationShutdown, Injectable, Logger, Optional } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppConfig } from '../config/app-config';
import type { Principal } from '../identity/principal';
import { ApiKey } from '../keys/api-key.entity';
import { principalOfKey } from '../keys/key-principal';
import { KeyRevocations } from '../keys/key-revocations';
import { SigningSecretVault } from '../keys/signing-secret-vault';
import { API_KEY_PATTERN, hashSecret } from '../identity/key-secret';

/** `signingSecret`: set when the key requires signed requests (docs/API.md#signed-requests). */
export type Verification = { ok: true; principal: Principal; signingSecret: string | null } | { ok: false; reason: 'malformed' | 'unknown' | 'revoked' | 'expired'; at?: Date };

interface VerifiedKey {
  principal: Principal;
  signingSecret: string | null;
}

interface CacheEntry {
  key: VerifiedKey | null;
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
  private readonly inFlight = new Map<string, Promise<VerifiedKey | null>>();
  private readonly lastUsedWritten = new Map<string, number>();
  private readonly pendingWrites = new Set<Promise<unknown>>();
  private readonly ttlMs: number;

  constructor(
    @InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>,
    config: AppConfig,
    revocations: KeyRevocations,
    @Optional() private readonly vault?: SigningSecretVault,
  ) {
    this.ttlMs = config.AUTH_CACHE_TTL_SECONDS * 1000;
    revocations.onRevoked((keyId) => this.drop(keyId));
  }

  async verify(secret: string, now = new Date()): Promise<Verification> {
    if (!API_KEY_PATTERN.test(secret)) return { ok: false, reason: 'malformed' };
    const hash = hashSecret(secret);
    const key = await this.lookup(hash, now.getTime());
    if (!key) return { ok: false, reason: 'unknown' };
    const { principal } = key;
    if (principal.revokedAt && principal.revokedAt <= now) return { ok: false, reason: 'revoked', at: principal.revokedAt };
    if (principal.expiresAt && principal.expiresAt <= now) return { ok: false, reason: 'expired', at: principal.expiresAt };
    this.recordUse(principal.keyId, now);
    return { ok: true, principal, signingSecret: key.signingSecret };
  }

  private drop(keyId: string): void {
    const hash = this.hashByKeyId.get(keyId);
    if (hash) this.byHash.delete(hash);
    this.hashByKeyId.delete(keyId);
  }

  private async lookup(hash: string, now: number): Promise<VerifiedKey | null> {
    const cached = this.byHash.get(hash);
    if (cached && cached.until > now) return cached.key;
    let pending = this.inFlight.get(hash);
    if (!pending) {
      pending = this.load(hash).finally(() => this.inFlight.delete(hash));
      this.inFlight.set(hash, pending);
    }
    const key = await pending;
    this.remember(hash, key, now);
    return key;
  }

  private async load(hash: string): Promise<VerifiedKey | null> {
    const key = await this.keys.findOne({ where: { secret_hash: hash }, relations: { account: true } });
    if (!key?.account) return null;
    return { principal: principalOfKey(key, key.account), signingSecret: this.signingSecretOf(key) };
  }

  private signingSecretOf(key: ApiKey): string | null {
    if (key.signing_secret_sealed === null || key.signing_secret_key_id === null) return null;
    // A signing key whose secret cannot be opened here must fail closed, never pass unsigned.
    if (!this.vault) throw new Error(`API key ${key.id} requires signed requests but this process holds no secrets key`);
    return this.vault.openSigningSecret(key.account_id, key.id, { key_id: key.signing_secret_key_id, sealed: key.signing_secret_sealed });
  }

  private remember(hash: string, key: VerifiedKey | null, now: number): void {
    if (this.ttlMs === 0) return;
    if (this.byHash.size >= MAX_ENTRIES) {
      const [oldestHash, oldest] = this.byHash.entries().next().value as [string, CacheEntry];
      this.byHash.delete(oldestHash);
      if (oldest.key) this.hashByKeyId.delete(oldest.key.principal.keyId);
    }
    this.byHash.set(hash, { key, until: now + (key ? this.ttlMs : Math.min(this.ttlMs, NEGATIVE_TTL_MS)) });
    if (key) this.hashByKeyId.set(key.principal.keyId, hash);
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
