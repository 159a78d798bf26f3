/**
 * What an OAuth access token costs a request beside an API key (docs/authorization.md#access-tokens):
 * the service in-process on PGlite, a loopback issuer, `GET /v1/tools?limit=1` through inject()
 * (no sockets, so the difference is the credential's), rounds of each credential alternating.
 * Prints per-request microseconds: median of the rounds and their spread.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { startTestApp } from '../test/support/app';
import { startOAuthIssuer } from '../test/support/oauth-issuer';
import { printPaired, timeRounds } from './rounds';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400);

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tos-bench-oauth-'));
  const issuer = await startOAuthIssuer();
  const base = 'http://127.0.0.1:3999';
  const t = await startTestApp({ env: { DATA_DIR: dataDir, OAUTH_ISSUER: issuer.url, EGRESS_ALLOW: '127.0.0.1', PUBLIC_URL: base } });
  try {
    const account = await t.createAccount('bench-oauth');
    const token = await issuer.mint(account.id, { audience: `${base}/v1`, expiresIn: 3600 });
    const request = async (secret: string) => {
      const res = await t.request({ method: 'GET', url: '/v1/tools?limit=1', headers: { authorization: `Bearer ${secret}` } });
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${res.body}`);
    };
    const times = await timeRounds({ key: () => request(account.key), token: () => request(token) }, ROUNDS, REQUESTS, 'request');
    printPaired('token − key', times.token, times.key);
  } finally {
    await t.close();
    await issuer.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
