/** The operator commands' runtime: the service's modules on the database, with no HTTP. Loaded only by a command that runs one. */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppException } from '../common/errors';
import { ConfigError, loadConfig } from '../config/app-config';
import { claimDataDir } from '../database/data-source-options';
import { AccountsService } from '../keys/accounts.service';
import { ApiKeysService } from '../keys/api-keys.service';
import { SecretsService } from '../secrets/secrets.service';
import { ConsoleSessions } from '../sessions/console-sessions.service';
import { CliModule } from './cli.module';

export type Services = { accounts: AccountsService; keys: ApiKeysService; secrets: SecretsService; consoleSessions: ConsoleSessions };

export interface OperatorOptions {
  /** Load the service's tools: a command that names tools (`keys create --tool-ids`) has them checked. Doubles the start-up. */
  tools?: boolean;
}

/** Opens the database for one command, prints its result, closes. */
export async function runOperator(action: (services: Services) => Promise<unknown>, options: OperatorOptions = {}): Promise<void> {
  const config = loadConfig();
  claimDataDir(config);
  // Failures reach the handler in main.ts, which prints their message once.
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(config, options.tools === true), { logger: false, abortOnError: false });
  try {
    const result = await action({ accounts: app.get(AccountsService), keys: app.get(ApiKeysService), secrets: app.get(SecretsService), consoleSessions: app.get(ConsoleSessions) });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await app.close();
  }
}

/** The errors whose message is the whole story (no stack): a bad setting, a refused request. */
export const isExpectedFailure = (err: unknown): err is Error => err instanceof AppException || err instanceof ConfigError;
