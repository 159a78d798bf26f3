/**
 * Start-up time and resident memory at readiness of the built service, several runs, medians.
 *
 *   npm run bench:startup                         # embedded (PGlite), 7 runs of dist/
 *   STARTUP_RUNS=9 STARTUP_DISTS=dist,/tmp/before/dist npm run bench:startup
 *                                                 # alternate two builds run by run (paired)
 *   DATABASE_URL=postgres://… npm run bench:startup   # PostgreSQL mode (migrated once by the first run)
 *   STARTUP_PROFILE=1 npm run bench:startup       # plus the npm packages loaded at ready, slowest first
 *
 * A run is ready at the first 200 from GET /readyz; each embedded run gets a fresh DATA_DIR.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../test/support/free-port';
import { spawnUntilReady } from './spawn-until-ready';

const ROOT = path.join(__dirname, '..');
const RUNS = Number(process.env.STARTUP_RUNS ?? 7);
const DISTS = (process.env.STARTUP_DISTS ?? 'dist').split(',').map((dist) => path.resolve(ROOT, dist.trim()));
const PROFILE = process.env.STARTUP_PROFILE === '1';
const DATABASE_URL = process.env.DATABASE_URL ?? '';
const PROFILE_ROWS = 40;
const REPORT_WAIT_MS = 500;

interface Sample {
  startupMs: number;
  rssMb: number;
}

async function runOnce(dist: string, profileFile?: string): Promise<Sample> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'tos-startup-'));
  const port = await freePort();
  const service = await spawnUntilReady({
    name: dist,
    command: process.execPath,
    args: [...(profileFile ? ['-r', path.join(__dirname, 'module-load-profile.js')] : []), path.join(dist, 'src/main.js')],
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', DATA_DIR: dataDir, DATABASE_URL, REDIS_URL: '', STARTUP_LOAD_REPORT: profileFile ?? '' },
    isReady: async () => (await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1_000) })).status === 200,
  });
  const sample = { startupMs: service.startupMs, rssMb: service.rssMb() };
  if (profileFile) {
    process.kill(service.pid, 'SIGUSR2');
    await sleep(REPORT_WAIT_MS);
  }
  await service.stop();
  await rm(dataDir, { recursive: true, force: true });
  return sample;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const spread = (values: number[]) => `${Math.min(...values)}–${Math.max(...values)}`;

async function printProfile(dist: string): Promise<void> {
  const file = path.join(tmpdir(), `tos-startup-loads-${process.pid}.json`);
  const sample = await runOnce(dist, file);
  const rows = JSON.parse(await readFile(file, 'utf8')) as { name: string; ms: number; rssMb: number; importers: string[] }[];
  await rm(file, { force: true });
  console.log(`\n${dist}: ${rows.length} packages loaded at ready (profiled run: ${sample.startupMs} ms, ${sample.rssMb} MiB; times include what each loads)`);
  for (const row of rows.slice(0, PROFILE_ROWS)) {
    const importers = row.importers.filter((importer) => importer.startsWith('dist/')).slice(0, 3).join(', ');
    console.log(`${row.ms.toFixed(0).padStart(6)} ms ${row.rssMb.toFixed(1).padStart(6)} MiB  ${row.name}${importers ? `  ← ${importers}` : ''}`);
  }
}

async function main(): Promise<void> {
  const samples = new Map<string, Sample[]>(DISTS.map((dist) => [dist, []]));
  for (let run = 0; run < RUNS; run++) {
    // Alternate which build goes first, so a noisy phase of the machine hits both alike.
    const order = run % 2 === 0 ? DISTS : [...DISTS].reverse();
    for (const dist of order) samples.get(dist)!.push(await runOnce(dist));
  }
  for (const [dist, runs] of samples) {
    const ms = runs.map((run) => run.startupMs);
    const rss = runs.map((run) => run.rssMb);
    console.log(`${dist}: start-up median ${median(ms)} ms (${spread(ms)}), RSS at ready median ${median(rss)} MiB (${spread(rss)}), ${runs.length} runs${DATABASE_URL ? ', PostgreSQL' : ', embedded'}`);
  }
  if (PROFILE) for (const dist of DISTS) await printProfile(dist);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
