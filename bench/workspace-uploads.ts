/**
 * How much concurrent workspace uploads of one account slow another account's reads: the real app on embedded PGlite (a temporary DATA_DIR), account A uploads three ~45 MB
 * archives at once while account B lists its workspaces in a loop; prints B's latencies.
 *   npm run bench:workspaces          (~1 min)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startTestApp } from '../test/support/app';

const UPLOADS = 3;
const ARCHIVE_MB = 45;

function archive(dir: string): Buffer {
  // Random bytes do not compress: the archive is as large as the file.
  execFileSync('sh', ['-c', `head -c ${ARCHIVE_MB}M /dev/urandom > ${dir}/blob && tar czf ${dir}/a.tar.gz -C ${dir} blob`]);
  return readFileSync(path.join(dir, 'a.tar.gz'));
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tos-bench-ws-'));
  const body = archive(dir);
  const t = await startTestApp({ env: { DATA_DIR: path.join(dir, 'data'), WORKSPACE_MAX_BYTES: String(60 * 1024 * 1024) } });
  try {
    const uploader = await t.createAccount('uploader', 'enterprise');
    const reader = await t.createAccount('reader', 'enterprise');
    const list = async () => {
      const started = performance.now();
      const res = await t.request({ method: 'GET', url: '/v1/workspaces', key: reader.key });
      if (res.statusCode !== 200) throw new Error(`list answered ${res.statusCode}`);
      return performance.now() - started;
    };
    for (let i = 0; i < 20; i++) await list(); // warm
    const idle: number[] = [];
    for (let i = 0; i < 50; i++) idle.push(await list());

    const busy: number[] = [];
    let uploading = true;
    const started = performance.now();
    const uploads = Promise.all(
      Array.from({ length: UPLOADS }, () =>
        t.request({ method: 'POST', url: '/v1/workspaces', key: uploader.key, headers: { 'content-type': 'application/gzip' }, payload: body }),
      ),
    ).finally(() => (uploading = false));
    const poller = (async () => {
      while (uploading) busy.push(await list());
    })();
    const answers = await uploads;
    const uploadMs = performance.now() - started;
    await poller;
    const statuses = answers.map((a) => a.statusCode);
    const row = (name: string, xs: number[]) => {
      const sorted = [...xs].sort((a, b) => a - b);
      return `${name.padEnd(22)} n=${String(sorted.length).padStart(4)}  p50=${percentile(sorted, 50).toFixed(1)} ms  p95=${percentile(sorted, 95).toFixed(1)} ms  max=${sorted[sorted.length - 1].toFixed(1)} ms`;
    };
    console.log(`${UPLOADS} uploads of ${(body.length / 1048576).toFixed(1)} MiB: statuses ${statuses.join(',')}, ${uploadMs.toFixed(0)} ms for all`);
    console.log(row('other account, idle', idle));
    console.log(row('other account, busy', busy));
  } finally {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
