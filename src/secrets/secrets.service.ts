import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppException } from '../common/errors';
import { AppConfig, ConfigError } from '../config/app-config';
import type { SealedSigningSecret, SigningSecretVault } from '../keys/signing-secret-vault';
import type { AccountSecretSource } from '../tools/context/secrets';
import { ToolError } from '../tools/sdk';
import { AccountSecret } from './account-secret.entity';
import { EmbeddedKeyFile } from './embedded-key-file';
import { SECRETS_KEY_HOWTO, SecretCipher, type Sealed } from './secret-cipher';
import { SECRET_NAME } from './secret-name';

/** Secrets one account may hold: they are credentials, not a key-value store. */
export const MAX_SECRETS_PER_ACCOUNT = 100;

export interface SecretView {
  name: string;
  created_at: string;
  updated_at: string;
}

/** Per-account secrets: written and listed through the API and CLI, read only by tools (ctx.secrets). */
@Injectable()
export class SecretsService implements AccountSecretSource, SigningSecretVault {
  private readonly logger = new Logger(SecretsService.name);
  private readonly keyFile: EmbeddedKeyFile | null;

  constructor(
    @InjectRepository(AccountSecret) private readonly secrets: Repository<AccountSecret>,
    private readonly cipher: SecretCipher,
    config: AppConfig,
  ) {
    this.keyFile = EmbeddedKeyFile.of(config);
  }

  /**
   * A service that cannot open the secrets it holds does not start (it would fail every tool that
   * reads one). Called by the service at start, not by operator commands, which never open them.
   */
  async checkStoredKeys(): Promise<void> {
    const keyIds: { key_id: string }[] = await this.secrets.query(
      'SELECT key_id FROM account_secrets UNION SELECT signing_secret_key_id FROM api_keys WHERE signing_secret_key_id IS NOT NULL',
    );
    const unknown = keyIds.map((row) => row.key_id).filter((keyId) => !this.cipher.knows(keyId));
    if (unknown.length === 0) return;
    throw new ConfigError(
      this.cipher.configured
        ? `Stored account secrets were sealed with key(s) ${unknown.join(', ')}, which SECRETS_KEY and SECRETS_PREVIOUS_KEYS do not hold: add the old key to SECRETS_PREVIOUS_KEYS`
        : `The database holds account secrets but SECRETS_KEY is not set: set the key they were sealed with (${SECRETS_KEY_HOWTO} for a new deployment)`,
    );
  }

  /** Creates or replaces; `created` tells which. */
  async set(accountId: string, name: string, value: string, now = new Date()): Promise<SecretView & { created: boolean }> {
    this.requireKey();
    const sealed = this.cipher.seal(accountId, name, value);
    return this.secrets.manager.transaction(async (manager) => {
      // Serialises writers of one account, so the cap holds under concurrent PUTs.
      await manager.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
      const existing = await manager.findOneBy(AccountSecret, { account_id: accountId, name });
      if (!existing && (await manager.countBy(AccountSecret, { account_id: accountId })) >= MAX_SECRETS_PER_ACCOUNT) {
        throw new AppException('CONFLICT', `An account holds at most ${MAX_SECRETS_PER_ACCOUNT} secrets: delete one first`, { details: { limit: MAX_SECRETS_PER_ACCOUNT } });
      }
      const row = Object.assign(existing ?? new AccountSecret(), { account_id: accountId, name, ...sealed, created_at: existing?.created_at ?? now, updated_at: now });
      await manager.save(AccountSecret, row);
      return { ...secretView(row), created: !existing };
    });
  }

  async list(accountId: string): Promise<SecretView[]> {
    const rows = await this.secrets.find({ where: { account_id: accountId }, order: { name: 'ASC' }, select: ['name', 'created_at', 'updated_at'] });
    return rows.map(secretView);
  }

  async delete(accountId: string, name: string): Promise<void> {
    const { affected } = await this.secrets.delete({ account_id: accountId, name });
    if (!affected) throw AppException.notFound('Secret', name);
  }

  /** ctx.secrets' account lookup: the value, or undefined when the account has none of that name. */
  async find(accountId: string, name: string): Promise<string | undefined> {
    if (!SECRET_NAME.test(name)) return undefined;
    const row = await this.secrets.findOneBy({ account_id: accountId, name });
    if (!row) return undefined;
    try {
      return this.cipher.open(accountId, name, row);
    } catch {
      throw new ToolError(`Secret '${name}' cannot be opened with the service's current keys`, {
        details: { secret: name },
        suggestion: `Set it again (PUT /v1/secrets/${name}), or ask the operator to restore the key it was sealed with in SECRETS_PREVIOUS_KEYS`,
      });
    }
  }

  /**
   * Seals a credential the service keeps for an account besides its secrets (a webhook's signing
   * secret), bound to `name`; the key as for secrets (made on first use when embedded).
   */
  sealCredential(accountId: string, name: string, value: string): Sealed {
    this.requireKey();
    return this.cipher.seal(accountId, name, value);
  }

  /** What `sealCredential` sealed; throws when it does not open with the current keys. */
  openCredential(accountId: string, name: string, sealed: Sealed): string {
    return this.cipher.open(accountId, name, sealed);
  }

  /**
   * The secret inputs of a queued call, sealed for the job payload (Redis holds it until a worker
   * takes it), bound to the execution; null when SECRETS_KEY is unset (they then travel as given).
   */
  sealJobInputs(executionId: string, values: Record<string, unknown>): Sealed | null {
    return this.cipher.configured ? this.cipher.seal('', `job:${executionId}`, JSON.stringify(values)) : null;
  }

  /** The values `sealJobInputs` sealed for this execution; throws when they do not open here. */
  openJobInputs(executionId: string, sealed: Sealed): Record<string, unknown> {
    return JSON.parse(this.cipher.open('', `job:${executionId}`, sealed)) as Record<string, unknown>;
  }

  /** A key's signing secret (docs/API.md#signed-requests), sealed to that key and its account. */
  sealSigningSecret(accountId: string, keyId: string, secret: string): SealedSigningSecret {
    this.requireKey();
    return this.cipher.seal(accountId, `signing:${keyId}`, secret);
  }

  openSigningSecret(accountId: string, keyId: string, sealed: SealedSigningSecret): string {
    return this.cipher.open(accountId, `signing:${keyId}`, sealed);
  }

  /** The key to seal with: SECRETS_KEY, else (embedded) the key file, made now on first use. Not retryable when neither. */
  private requireKey(): void {
    if (this.cipher.configured) return;
    if (this.keyFile) {
      this.cipher.adopt(this.keyFile.create());
      this.logger.warn(`Account secrets are sealed with a key made for this embedded service in ${this.keyFile.path} (mode 0600): keep it with the data directory, or set SECRETS_KEY to its contents`);
      return;
    }
    throw new AppException('INTERNAL_ERROR', 'Account secrets are not enabled on this service: the operator must set SECRETS_KEY (it is required with PostgreSQL)', {
      status: 501,
      retryable: false,
      details: { setting: 'SECRETS_KEY' },
      suggestion: `Operators: ${SECRETS_KEY_HOWTO}, and restart every process with SECRETS_KEY set to it`,
    });
  }
}

function secretView(row: Pick<AccountSecret, 'name' | 'created_at' | 'updated_at'>): SecretView {
  return { name: row.name, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() };
}
