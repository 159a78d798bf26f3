/**
 * Start-up time and resident memory at readiness of the built service, several runs, medians.
 *
 *   npm run bench:startup                         # embedded (PGlite), 7 runs of dist/
 *   STARTUP_RUNS=9 STARTUP_DISTS=dist,/tmp/before/dist npm run bench:startup
 *                                                 # alternate two builds run by run (paired)
 *   STARTUP_POSTGRES=1 npm run bench:startup      # PostgreSQL mode: a throwaway server, migrated by an uncounted first run
 *   STARTUP_ROLE=worker npm run bench:startup     # a worker process (PostgreSQL and Redis, throwaway), ready on HEALTH_PORT
 *   STARTUP_PROFILE=1 npm run bench:startup       # plus the npm packages loaded at ready, slowest first
 *
 * A run is ready at the first 200 from GET /readyz (a worker's on HEALTH_PORT); each embedded run gets a fresh DATA_DIR. Besides
 * the wall time it reports the CPU time the process used until then (user + system, all threads),
 * which a busy machine disturbs far less.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { freePort } from '../test/support/free-port';
import { startPostgres } from '../test/support/postgres-server';
import { startRedis } from '../test/support/redis-server';
import { spawnUntilReady } from './spawn-until-ready';

const ROOT = path.join(__dirname, '..');
const RUNS = Number(process.env.STARTUP_RUNS ?? 7);
const DISTS = (process.env.STARTUP_DISTS ?? 'dist').split(',').map((dist) => path.resolve(ROOT, dist.trim()));
const PROFILE = process.env.STARTUP_PROFILE === '1';
const ROLE = process.env.STARTUP_ROLE === 'worker' ? 'worker' : undefined;
/** A worker needs PostgreSQL and Redis; the default (all roles in one process) runs on either database. */
const POSTGRES = process.env.STARTUP_POSTGRES === '1' || ROLE === 'worker';
const PROFILE_ROWS = 40;
const REPORT_WAIT_MS = 500;

interface Sample {
  startupMs: number;
  cpuMs: number;
  rssMb: number;
}

async function runOnce(dist: string, resources: Record<string, string>, profileFile?: string): Promise<Sample> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'tos-startup-'));
  const port = await freePort();
  const healthPort = await freePort();
  // A worker serves no other HTTP; the other roles are ready when their main port answers.
  const probePort = ROLE === 'worker' ? healthPort : port;
  const service = await spawnUntilReady({
    name: dist,
    command: process.execPath,
    args: [...(profileFile ? ['-r', path.join(__dirname, 'module-load-profile.js')] : []), path.join(dist, 'src/main.js'), ...(ROLE ? ['--role', ROLE] : [])],
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', HEALTH_PORT: String(healthPort), DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '', ...resources, STARTUP_LOAD_REPORT: profileFile ?? '' },
    isReady: async () => (await fetch(`http://127.0.0.1:${probePort}/readyz`, { signal: AbortSignal.timeout(1_000) })).status === 200,
  });
  const sample = { startupMs: service.startupMs, cpuMs: service.cpuMs(), rssMb: service.rssMb() };
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

async function printProfile(dist: string, resources: Record<string, string>): Promise<void> {
  const file = path.join(tmpdir(), `tos-startup-loads-${process.pid}.json`);
  const sample = await runOnce(dist, resources, file);
  const rows = JSON.parse(await readFile(file, 'utf8')) as { name: string; ms: number; rssMb: number; importers: string[] }[];
  await rm(file, { force: true });
  console.log(`\n${dist}: ${rows.length} packages loaded at ready (profiled run: ${sample.startupMs} ms, ${sample.rssMb} MiB; times include what each loads)`);
  for (const row of rows.slice(0, PROFILE_ROWS)) {
    const importers = row.importers.filter((importer) => importer.startsWith('dist/')).slice(0, 3).join(', ');
    console.log(`${row.ms.toFixed(0).padStart(6)} ms ${row.rssMb.toFixed(1).padStart(6)} MiB  ${row.name}${importers ? `  ← ${importers}` : ''}`);
  }
}

/** A fresh database on a throwaway PostgreSQL server (or none: embedded PGlite, a fresh DATA_DIR per run), and Redis for a worker. */
async function startResources(stops: Array<() => Promise<void>>): Promise<Record<string, string>> {
  if (!POSTGRES) return {};
  const postgres = await startPostgres();
  stops.push(() => postgres.stop());
  const admin = new Client({ connectionString: postgres.url });
  await admin.connect();
  await admin.query('CREATE DATABASE tos_startup').finally(() => admin.end());
  const resources = { DATABASE_URL: postgres.url.replace(/\/postgres$/, '/tos_startup') };
  if (ROLE !== 'worker') return resources;
  const redis = await startRedis();
  stops.push(() => redis.stop());
  return { ...resources, REDIS_URL: redis.url };
}

async function main(): Promise<void> {
  const stops: Array<() => Promise<void>> = [];
  try {
    await measure(await startResources(stops));
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

async function measure(resources: Record<string, string>): Promise<void> {
  // Migrations run once per database: the first start on PostgreSQL is not counted.
  if (resources.DATABASE_URL) await runOnce(DISTS[0], resources);
  const samples = new Map<string, Sample[]>(DISTS.map((dist) => [dist, []]));
  for (let run = 0; run < RUNS; run++) {
    // Alternate which build goes first, so a noisy phase of the machine hits both alike.
    const order = run % 2 === 0 ? DISTS : [...DISTS].reverse();
    for (const dist of order) samples.get(dist)!.push(await runOnce(dist, resources));
  }
  for (const [dist, runs] of samples) {
    const ms = runs.map((run) => run.startupMs);
    const rss = runs.map((run) => run.rssMb);
    const cpu = runs.map((run) => run.cpuMs);
    console.log(`${dist}: start-up median ${median(ms)} ms (${spread(ms)}), CPU until ready median ${median(cpu)} ms (${spread(cpu)}), RSS at ready median ${median(rss)} MiB (${spread(rss)}), ${runs.length} runs${ROLE ? `, role ${ROLE}` : ''}${resources.DATABASE_URL ? ', PostgreSQL' : ', embedded'}`);
  }
  if (PROFILE) for (const dist of DISTS) await printProfile(dist, resources);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
