/** A signing secret as stored: sealed under the service's secrets key, which `key_id` names. */
export interface SealedSigningSecret {
  key_id: string;
  sealed: string;
}

/**
 * Seals and opens keys' signing secrets (docs/API.md#signed-requests) with the service's secrets
 * mechanism, which lives in a layer above keys: SecretsModule provides it (src/secrets/secrets.module.ts).
 */
export abstract class SigningSecretVault {
  /** Throws (501) when the service has no secrets key to seal with. */
  abstract sealSigningSecret(accountId: string, keyId: string, secret: string): SealedSigningSecret;
  abstract openSigningSecret(accountId: string, keyId: string, sealed: SealedSigningSecret): string;
}
