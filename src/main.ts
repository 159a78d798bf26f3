import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { createApp } from './app.setup';
import { ConfigError, loadConfig } from './config/app-config';
import { ToolRegistry } from './tools/tool-registry';

async function main(): Promise<void> {
  const config = loadConfig();
  const app = await createApp({ config });
  await app.listen({ port: config.PORT, host: config.HOST });
  const tools = app.get(ToolRegistry).all().length;
  const database = config.DATABASE_URL ? 'PostgreSQL' : `PGlite in ${config.DATA_DIR}`;
  new Logger('Main').log(
    `Tool Orchestration Service listening on http://${config.HOST}:${config.PORT} (database: ${database}, ${tools} tools, ready in ${Math.round(performance.now())} ms)`,
  );
}

main().catch((err: unknown) => {
  // Configuration mistakes get a plain message, not a stack trace.
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
