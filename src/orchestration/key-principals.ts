import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppException } from '../common/errors';
import type { Principal } from '../identity/principal';
import type { Scope } from '../identity/scopes';
import { ApiKeysService } from '../keys/api-keys.service';
import { ApiKey } from '../keys/api-key.entity';
import { principalOfKey } from '../keys/key-principal';

export type KeyStanding = { principal: Principal } | { refused: string };

/**
 * The principal a schedule or trigger runs as: the key that created it, loaded afresh at every
 * run (not from the verifier's cache), so a revoked or expired key stops its runs at once.
 */
@Injectable()
export class KeyPrincipals {
  constructor(@InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>) {}

  async standing(keyId: string, now = new Date()): Promise<KeyStanding> {
    const key = await this.keys.findOne({ where: { id: keyId }, relations: { account: true } });
    if (!key?.account) return { refused: `The key ${keyId} that created it no longer exists` };
    if (key.revoked_at && key.revoked_at <= now) return { refused: `The key ${keyId} that created it was revoked at ${key.revoked_at.toISOString()}` };
    if (key.expires_at && key.expires_at <= now) return { refused: `The key ${keyId} that created it expired at ${key.expires_at.toISOString()}` };
    return { principal: principalOfKey(key, key.account) };
  }
}

/** What a schedule or trigger runs as, decided when it is created. */
export interface RunningKey {
  key_id: string;
  /** Made by the service for it: revoked when it is deleted. */
  key_minted: boolean;
}

/** What a key made for a console user's schedule or trigger may do, at most: start runs and read them. */
const RUN_SCOPES: readonly Scope[] = ['tools:read', 'tools:invoke', 'executions:read'];

/**
 * The key a schedule or trigger runs as. An API key runs it as itself. A console session has no
 * key that outlives it, so the service makes one: a service key named after what it runs, holding
 * at most RUN_SCOPES within the session's scopes and tools, whose secret nobody is shown (it is
 * only ever used by id, by the runs) and which is revoked when the schedule or trigger is deleted.
 * An access token is refused: what it holds is a grant that ends, and minting a key from it would
 * outlive the grant.
 */
@Injectable()
export class RunningKeys {
  constructor(private readonly keys: ApiKeysService) {}

  async for(principal: Principal, name: string): Promise<RunningKey> {
    if (principal.keyType === 'oauth') {
      throw new AppException('FORBIDDEN', 'Schedules and triggers run as an API key: create them with an API key or in the console, not with an access token');
    }
    if (principal.keyType !== 'session') return { key_id: principal.keyId, key_minted: false };
    const scopes = RUN_SCOPES.filter((scope) => principal.scopes.has(scope));
    const issued = await this.keys.create(
      principal.accountId,
      { name: `${name} (made in the console)`, type: 'service', scopes, tool_ids: principal.toolIds && [...principal.toolIds] },
      { scopes: principal.scopes, toolIds: principal.toolIds },
    );
    return { key_id: issued.record.id, key_minted: true };
  }

  /** After the schedule or trigger is gone (or was never saved): revokes the key made for it. */
  async release(accountId: string, key: RunningKey): Promise<void> {
    if (!key.key_minted) return;
    await this.keys.revoke(accountId, key.key_id).catch((err: unknown) => {
      // Deleted by hand already: nothing left to revoke.
      if (!(err instanceof AppException && err.code === 'NOT_FOUND')) throw err;
    });
  }
}
