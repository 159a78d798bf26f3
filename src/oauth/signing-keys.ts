import { randomBytes } from 'node:crypto';
import type * as Jose from 'jose';
import type { Repository } from 'typeorm';
import type { SecretsService } from '../secrets/secrets.service';
import { OAuthRecord } from './oauth-record.entity';

/** The built-in server's secrets: its token-signing key (a private JWK) and the keys that sign its cookies. */
export interface ServerKeys {
  jwks: { keys: Jose.JWK[] };
  cookieKeys: string[];
}

const MODEL = 'SigningKeys';
const ID = 'current';
const SEAL_NAME = 'oauth:server-keys';

/**
 * Made once (the first start with OAUTH_BUILTIN) and stored sealed with SECRETS_KEY, so every replica
 * and every restart signs with the same key and earlier tokens keep verifying.
 */
export async function loadServerKeys(records: Repository<OAuthRecord>, vault: SecretsService, jose: typeof Jose): Promise<ServerKeys> {
  const stored = await records.findOne({ where: { model: MODEL, id: ID } });
  if (stored) return JSON.parse(vault.openCredential('', SEAL_NAME, stored.payload as never)) as ServerKeys;
  const { privateKey } = await jose.generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await jose.exportJWK(privateKey)), alg: 'ES256', use: 'sig' };
  jwk.kid = await jose.calculateJwkThumbprint(jwk);
  const made: ServerKeys = { jwks: { keys: [jwk] }, cookieKeys: [randomBytes(32).toString('base64url')] };
  const sealed = vault.sealCredential('', SEAL_NAME, JSON.stringify(made));
  // Two replicas starting together: the first insert wins and both use what it stored.
  await records.createQueryBuilder().insert().values({ model: MODEL, id: ID, payload: { ...sealed }, grant_id: null, uid: null, account_id: null, expires_at: null, consumed_at: null }).orIgnore().execute();
  const winner = await records.findOneOrFail({ where: { model: MODEL, id: ID } });
  return JSON.parse(vault.openCredential('', SEAL_NAME, winner.payload as never)) as ServerKeys;
}
