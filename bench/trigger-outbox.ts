/**
 * `npm run bench:trigger-outbox`: what the internal-trigger insert (src/webhooks/webhook-outbox.ts,
 * `triggerEventsInsert`) adds to the statement that ends executions (ExecutionsStore's group-committed
 * end). Same database, same batches of `BENCH_BATCH` queued rows ended to `error`, the statement with
 * and without the trigger CTE in alternation, `BENCH_ROUNDS` rounds; µs per ended row, median and
 * min–max, on PGlite and on PostgreSQL (a throwaway server of the bench's own). Two accounts: one
 * with no trigger (the common case: the CTE finds nothing), one with three internal triggers of
 * which one takes every ended row (an event written per row). Both hold a webhook subscription
 * that takes no `execution.failed`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { DataSource } from 'typeorm';
import { createApp } from '../src/app.setup';
import { loadConfig } from '../src/config/app-config';
import { newExecutionId } from '../src/common/ids';
import { AccountsService } from '../src/keys/accounts.service';
import { outboxInsert, triggerEventsInsert } from '../src/webhooks/webhook-outbox';
import { startPostgres } from '../test/support/postgres-server';

const BATCH = Number(process.env.BENCH_BATCH ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);

const end = (withTriggers: boolean) => `WITH ended AS (
    UPDATE executions e SET status = 'error', error = '{"code":"TOOL_ERROR","message":"x"}'::jsonb, completed_at = now(), duration_ms = 1
     WHERE e.id = ANY($1::text[]) AND e.status = 'queued' RETURNING e.*),
  outbox AS (${outboxInsert('ended')})${withTriggers ? `, trigger_outbox AS (${triggerEventsInsert('ended')})` : ''}
  SELECT count(*) FROM ended`;

async function measure(engine: string, env: Record<string, string>): Promise<void> {
  const workspaceRoot = mkdtempSync(path.join(tmpdir(), 'tos-bench-ws-'));
  const app = await createApp({ config: loadConfig({ LOG_LEVEL: 'silent', WORKSPACE_ROOT: workspaceRoot, ORCHESTRATION_POLL_MS: '0', WEBHOOK_POLL_MS: '0', ...env }) });
  await app.init();
  try {
    const db = app.get(DataSource);
    const accounts = app.get(AccountsService);
    const now = new Date().toISOString();
    for (const scenario of ['no trigger', 'a matching trigger'] as const) {
      const account = await accounts.create({ name: `bench-${scenario.replace(/ /g, '-')}`, tier: 'enterprise' });
      await db.query(
        `INSERT INTO webhook_subscriptions (id, account_id, url, events, enabled, secret_key_id, secret_sealed, created_at, updated_at)
         VALUES ($1, $2, 'https://hooks.example.com', ARRAY['execution.completed'], true, 'k', 's', $3, $3)`,
        [`wh_${account.id}`, account.id, now],
      );
      const triggers = scenario === 'no trigger' ? 0 : 3;
      for (let i = 0; i < triggers; i++) {
        await db.query(
          `INSERT INTO triggers (id, account_id, key_id, target_kind, target_id, target_inputs, source_event, source_tool_ids, created_at, updated_at)
           VALUES ($1, $2, 'key_bench', 'tool', 'json-transform', '{}', 'execution.failed', $3, $4, $4)`,
          [`trg_${account.id}_${i}`, account.id, i === 0 ? ['bench-tool'] : [`other-tool-${i}`], now],
        );
      }
      const batch = async () => {
        const ids = Array.from({ length: BATCH }, () => newExecutionId());
        await db.query(
          `INSERT INTO executions (id, account_id, key_id, tool_id, tool_version, status, mode, progress, input, created_at)
           SELECT id, $2, 'key_bench', 'bench-tool', '1.0.0', 'queued', 'async', 0, '{}'::jsonb, now() FROM unnest($1::text[]) id`,
          [ids, account.id],
        );
        return ids;
      };
      const samples: Record<'without' | 'with', number[]> = { without: [], with: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const variant of round % 2 === 0 ? (['without', 'with'] as const) : (['with', 'without'] as const)) {
          const ids = await batch();
          const started = process.hrtime.bigint();
          await db.query(end(variant === 'with'), [ids]);
          samples[variant].push(Number(process.hrtime.bigint() - started) / 1000 / BATCH);
        }
      }
      const [{ n }] = (await db.query(`SELECT count(*)::int AS n FROM trigger_events WHERE account_id = $1`, [account.id])) as [{ n: number }];
      for (const variant of ['without', 'with'] as const) {
        const sorted = samples[variant].slice(5).sort((a, b) => a - b); // the first rounds warm up
        const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(1);
        console.log(`${engine}\t${scenario}\t${variant} the trigger CTE\tµs/row median ${at(0.5)}\tmin ${at(0)}\tmax ${at(1)}\t(${sorted.length} batches of ${BATCH}; ${n} events written)`);
      }
    }
  } finally {
    await app.close();
    rmSync(workspaceRoot, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tos-bench-pglite-'));
  try {
    await measure('pglite', { DATA_DIR: dataDir });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  const postgres = await startPostgres();
  try {
    await measure('postgres', { DATABASE_URL: postgres.url });
  } finally {
    await postgres.stop();
  }
}

void main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
