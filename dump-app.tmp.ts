import 'reflect-metadata';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
const root = process.argv[2];
const out = process.argv[3];
async function main() {
  const { createApp } = require(path.join(root, 'src/app.setup'));
  const { loadConfig } = require(path.join(root, 'src/config/app-config'));
  const dir = mkdtempSync(path.join(tmpdir(), 'dump-'));
  const config = loadConfig({ LOG_LEVEL: 'silent', WORKSPACE_ROOT: dir + '/ws', DATA_DIR: dir + '/data', METRICS_TOKEN: 'x'.repeat(20) });
  const app = await createApp({ config });
  await app.init();
  const fastify = app.getHttpAdapter().getInstance();
  await fastify.ready();
  const doc = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
  require('fs').writeFileSync(out + '.openapi.json', doc.body);
  require('fs').writeFileSync(out + '.routes.txt', fastify.printRoutes({ commonPrefix: false }));
  await app.close();
}
main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
