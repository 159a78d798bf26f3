import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppException } from '../common/errors';
import type { Principal } from '../identity/principal';
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

/** The key a schedule or trigger runs as: an API key (a console session ends; a standing run needs a key). */
export function runningKeyOf(principal: Principal): string {
  if (principal.keyType === 'session') {
    throw new AppException('FORBIDDEN', 'Schedules and triggers run as the API key that creates them: create them with an API key, not a console session');
  }
  return principal.keyId;
}
