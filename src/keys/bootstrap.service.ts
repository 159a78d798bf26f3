import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { AccountsService } from './accounts.service';
import { ApiKeysService } from './api-keys.service';

export const BOOTSTRAP_ACCOUNT = 'default';

/** Seeds account `default` with BOOTSTRAP_API_KEY, or says how to get a first key. */
@Injectable()
export class BootstrapService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Bootstrap');

  constructor(
    private readonly config: AppConfig,
    private readonly accounts: AccountsService,
    private readonly keys: ApiKeysService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const secret = this.config.BOOTSTRAP_API_KEY;
    if (secret) {
      const account = await this.accounts.ensure({ name: BOOTSTRAP_ACCOUNT, tier: this.config.BOOTSTRAP_TIER });
      const key = await this.keys.ensureServiceKey(account.id, 'bootstrap', secret);
      this.logger.log(`BOOTSTRAP_API_KEY is key ${key.id} (${key.prefix}…${key.last4}) of account '${account.name}' (tier ${account.tier})`);
      return;
    }
    if ((await this.keys.count()) === 0) {
      this.logger.warn(
        'No API keys exist yet. Restart with BOOTSTRAP_API_KEY set to a secret from `npm run -s cli -- keys secret` ' +
          '(it becomes a service key of account "default"), or create accounts and keys with `npm run cli -- accounts create ...` ' +
          'and `npm run cli -- keys create ...` (embedded mode: while the service is stopped). See README "Getting a first key".',
      );
    }
  }
}
