import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppException } from '../common/errors';
import { credentialName, type Principal } from '../identity/principal';
import type { Scope } from '../identity/scopes';
import { ApiKeysService } from '../keys/api-keys.service';
import { ApiKey } from '../keys/api-key.entity';
import { principalOfKey } from '../keys/key-principal';

/** `key_id` of a request that names the key a schedule or trigger runs as. */
export const KEY_ID_PATTERN = /^key_[A-Za-z0-9]{1,64}$/;
export const KEY_ID_PROPERTY = {
  pattern: KEY_ID_PATTERN.source,
  description: 'The API key it runs as, when not the caller’s own: a key of the account holding orchestration:manage; naming another key needs keys:manage. Required from a console session (docs/orchestration.md#the-key-it-runs-as).',
};

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

  /**
   * Who a schedule or trigger created (or resumed) by `caller` runs as
   * (docs/orchestration.md#the-key-it-runs-as): the caller's own key, or `keyId`, another key of
   * its account. A console session or an access token ends, so it must name one. Naming another
   * key needs `keys:manage` (a caller who may mint keys gains nothing by it), and the key must be
   * able to manage orchestration itself: active, of the account, holding `orchestration:manage`.
   */
  async runningAs(caller: Principal, keyId: string | undefined, now = new Date()): Promise<Principal> {
    if (keyId === undefined || keyId === caller.keyId) {
      if (caller.keyType === 'session' || caller.keyType === 'oauth') {
        throw new AppException('FORBIDDEN', `A schedule or trigger runs as an API key, and a ${credentialName(caller)} ends: name the key it runs as in key_id`);
      }
      return caller;
    }
    if (!caller.scopes.has('keys:manage')) throw new AppException('FORBIDDEN', 'Naming the key a schedule or trigger runs as (key_id) needs the scope keys:manage');
    const refuse = (message: string) => AppException.invalidRequest(message, { parameter: 'key_id' });
    // Another account's key is answered as one that does not exist: its state is none of the caller's business.
    if (!(await this.keys.existsBy({ id: keyId, account_id: caller.accountId }))) throw refuse(`key_id ${keyId} is not a key of this account`);
    const standing = await this.standing(keyId, now);
    if ('refused' in standing) throw refuse(standing.refused.replace('that created it ', ''));
    if (!standing.principal.scopes.has('orchestration:manage')) throw refuse(`The key ${keyId} does not hold orchestration:manage, which a key a schedule or trigger runs as needs`);
    return standing.principal;
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
 * The key a schedule or trigger runs as (docs/orchestration.md#the-key-it-runs-as): the one named
 * in `key_id`, else the caller's own. A console session naming none has no key that outlives it,
 * so the service makes one: a service key named after what it runs, holding at most RUN_SCOPES
 * within the session's scopes and tools, whose secret nobody is shown (the runs use it by id) and
 * which is revoked when the schedule or trigger is deleted. An access token naming none is refused
 * (KeyPrincipals.runningAs): its grant ends, and a key made from it would outlive the grant.
 */
@Injectable()
export class RunningKeys {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly principals: KeyPrincipals,
  ) {}

  /** The key, and the principal whose rights the target is checked against. */
  async for(caller: Principal, keyId: string | undefined, name: string, now = new Date()): Promise<RunningKey & { principal: Principal }> {
    if (keyId === undefined && caller.keyType === 'session') {
      const scopes = RUN_SCOPES.filter((scope) => caller.scopes.has(scope));
      const issued = await this.keys.create(
        caller.accountId,
        { name: `${name} (made in the console)`, type: 'service', scopes, tool_ids: caller.toolIds && [...caller.toolIds] },
        { scopes: caller.scopes, toolIds: caller.toolIds },
        now,
      );
      // Checked as the session: the key holds no more than it.
      return { key_id: issued.record.id, key_minted: true, principal: caller };
    }
    const principal = await this.principals.runningAs(caller, keyId, now);
    return { key_id: principal.keyId, key_minted: false, principal };
  }

  /** `work`, and when it fails (the schedule or trigger is not saved after all), the key made for it revoked. */
  async orRelease<T>(accountId: string, key: RunningKey, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      await this.release(accountId, key);
      throw err;
    }
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
