import { DynamicModule, Logger, Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { performance } from 'node:perf_hooks';
import { createApp, drainHttp } from './app.setup';
import { ConfigError, loadConfig, ROLES, Role } from './config/app-config';
import { claimDataDir } from './database/data-source-options';
import { RedisConnections } from './redis/redis-connections';
import { SecretsService } from './secrets/secrets.service';
import { ToolCatalogue } from './tools/tool-catalogue';
import { withinGrace } from './executions/engine/queue/execution-queue';

export interface ServiceOptions {
  /** Extension modules with their own @Tool providers (docs/writing-a-tool.md#extending-with-your-own-module). */
  extensions?: Array<Type | DynamicModule>;
  argv?: string[];
}

/** `--role api|worker|all` on the command line wins over ROLE in the environment. */
function roleFromArgv(argv: string[]): Role | undefined {
  const i = argv.findIndex((arg) => arg === '--role' || arg.startsWith('--role='));
  if (i === -1) return undefined;
  const value = argv[i].includes('=') ? argv[i].split('=')[1] : argv[i + 1];
  if (!(ROLES as readonly string[]).includes(value)) throw new ConfigError(`--role must be one of ${ROLES.join(', ')} (got ${JSON.stringify(value)})`);
  return value as Role;
}

/** Starts the service in the configured role: HTTP for api/all, queue consumption for worker/all. */
export async function runService(options: ServiceOptions = {}): Promise<void> {
  try {
    const role = roleFromArgv(options.argv ?? process.argv);
    const config = loadConfig({ ...process.env, ...(role && { ROLE: role }) });
    claimDataDir(config);
    const app = await createApp({ config, extensions: options.extensions });
    await app.get(SecretsService).checkStoredKeys();
    const logger = new Logger('Main');
    const database = config.DATABASE_URL ? 'PostgreSQL' : `PGlite in ${config.DATA_DIR}`;
    const queue = config.REDIS_URL ? 'Bull on Redis' : 'in-process';
    if (config.runsApi) {
      await app.listen({ port: config.PORT, host: config.HOST });
    } else {
      await app.init();
    }
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => {
        logger.log(`${signal}: shutting down; requests and executions in progress get up to ${config.SHUTDOWN_GRACE_SECONDS} s to finish`);
        void drain(app, config.runsApi, config.SHUTDOWN_GRACE_SECONDS * 1000)
          .catch((err: Error) => logger.error(`shutdown: ${err.message}`))
          .finally(() => process.kill(process.pid, signal));
      });
    }
    if (config.REDIS_URL) {
      await app.get(RedisConnections).persistenceWarning().then(
        (warning) => warning && logger.warn(warning),
        (err: Error) => logger.warn(`Cannot tell whether Redis persists the queue (reading its settings with CONFIG GET failed: ${err.message}); production needs appendonly yes`),
      );
    }
    const tools = app.get(ToolCatalogue).all().length; // filled in during init
    const where = config.runsApi ? ` listening on http://${config.HOST}:${config.PORT}` : '';
    logger.log(
      `Tool Orchestration Service (${config.ROLE})${where}: database ${database}, queue ${queue}, ${tools} tools, ready in ${Math.round(performance.now())} ms`,
    );
  } catch (err) {
    // Configuration mistakes get a plain message, not a stack trace.
    console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  }
}

/**
 * HTTP first: stop accepting and answer the requests in flight (within the grace period), since
 * the shutdown hooks then stop the worker, abort what still runs and close the database.
 * The signal is raised again at the end, so the process ends as signalled.
 */
async function drain(app: NestFastifyApplication, servesHttp: boolean, graceMs: number): Promise<void> {
  if (servesHttp) await withinGrace(drainHttp(app), graceMs);
  await app.close();
}
