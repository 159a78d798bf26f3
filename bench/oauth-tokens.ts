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
    const credentials = { key: account.key, token };
    const round = async (secret: string) => {
      const started = process.hrtime.bigint();
      for (let i = 0; i < REQUESTS; i++) {
        const res = await t.request({ method: 'GET', url: '/v1/tools?limit=1', headers: { authorization: `Bearer ${secret}` } });
        if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${res.body}`);
      }
      return Number(process.hrtime.bigint() - started) / 1000 / REQUESTS;
    };
    for (const secret of Object.values(credentials)) await round(secret); // warm-up: caches, JIT, the JWKS
    const times: Record<string, number[]> = { key: [], token: [] };
    for (let r = 0; r < ROUNDS; r++) {
      // Alternating which goes first, so drift on a shared machine falls on both.
      const order = r % 2 === 0 ? (['key', 'token'] as const) : (['token', 'key'] as const);
      for (const name of order) times[name].push(await round(credentials[name]));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    for (const [name, xs] of Object.entries(times)) {
      console.log(`${name.padEnd(5)} median ${median(xs).toFixed(0)} µs/request, rounds ${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)} (${ROUNDS} rounds × ${REQUESTS})`);
    }
    const diffs = times.key.map((k, i) => times.token[i] - k);
    console.log(`token − key, paired by round: median ${median(diffs).toFixed(0)} µs, ${Math.min(...diffs).toFixed(0)}–${Math.max(...diffs).toFixed(0)}`);
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
