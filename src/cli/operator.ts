/** The operator commands' direct runtime: the service's modules on the database, with no HTTP. Loaded only when the service is not running. */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '../config/app-config';
import { claimDataDir } from '../database/data-source-options';
import { AccountsService } from '../keys/accounts.service';
import { ApiKeysService } from '../keys/api-keys.service';
import { OPERATOR_ACTIONS, OperatorAction, needsTools, needsUpstreams } from '../operator/operator-actions';
import { readOperatorFile } from '../operator/operator-file';
import { SecretsService } from '../secrets/secrets.service';
import { ConsoleSessions } from '../sessions/console-sessions.service';
import { UpstreamsService } from '../upstreams/upstreams.service';
import { CliModule } from './cli.module';

/** Opens the database for one action, runs it, closes. */
export async function runOperatorDirectly(action: OperatorAction, args: Record<string, unknown>): Promise<unknown> {
  const config = loadConfig();
  claimDataDir(config);
  // Links made while the embedded service is down point where it last ran, unless PUBLIC_URL says otherwise.
  const publicUrl = config.PUBLIC_URL || config.DATABASE_URL ? config.publicUrl : (readOperatorFile(config.DATA_DIR)?.public_url ?? config.publicUrl);
  // Failures reach the handler in main.ts, which prints their message once.
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(config, needsTools(action, args), needsUpstreams(action)), { logger: false, abortOnError: false });
  try {
    const services = { accounts: app.get(AccountsService), keys: app.get(ApiKeysService), secrets: app.get(SecretsService), consoleSessions: app.get(ConsoleSessions), ...(needsUpstreams(action) && { upstreams: app.get(UpstreamsService) }), publicUrl };
    return await OPERATOR_ACTIONS[action](services, args);
  } finally {
    await app.close();
  }
}
