/**
 * `npm run bench`: builds the service, then for each configuration measures a raw Fastify baseline
 * and the service (start-up, memory, load scenarios) in the same run, prints the tables and writes
 * bench/results/latest.json. Every child process and temporary directory is removed on the way
 * out, failures and Ctrl-C included. See bench/README.md.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import * as path from 'node:path';
import { freePort } from '../test/support/free-port';
import { runLoad, type LoadRequest } from './load';
import { embeddedDataDir, postgresDatabase, redis, type Resource } from './resources';
import { formatReport, type BenchReport, type ConfigurationResult, type MeasuredLoad, type ScenarioResult } from './report';
import { provisionBenchKey } from './provision';
import type { CapturedAnswer } from './replay-server';
import { spawnBuiltService, spawnUntilReady, type ReadyProcess } from './spawn-until-ready';

const ROOT = path.join(__dirname, '..');
const RESULTS_FILE = path.join(__dirname, 'results', 'latest.json');
const CONNECTIONS = 50;
const WARMUP_SECONDS = 2;
const DURATION_SECONDS = Number(process.env.BENCH_DURATION ?? 10);
/** Each run of an MCP ÷ REST comparison (see pairedRatio). */
const PAIRED_RUN_SECONDS = 2;
const SERVICE_READY_TIMEOUT_MS = 60_000;
/** Comma-separated configuration names to run (all when unset), and a substring scenario names must contain. */
const ONLY_CONFIGURATIONS = process.env.BENCH_CONFIGURATIONS?.split(',').map((name) => name.trim());
const ONLY_SCENARIOS = process.env.BENCH_SCENARIOS ?? '';

interface Configuration {
  name: string;
  resources: Resource[];
  /** Issue 32's start-up targets: spawn to first 200, and resident memory at that moment. */
  startupTarget: { readyMs: number; rssMb: number };
}

const CONFIGURATIONS: Configuration[] = [
  { name: 'embedded', resources: [embeddedDataDir], startupTarget: { readyMs: 1_000, rssMb: 200 } },
  { name: 'postgres', resources: [postgresDatabase], startupTarget: { readyMs: 600, rssMb: 150 } },
  { name: 'postgres+redis', resources: [postgresDatabase, redis], startupTarget: { readyMs: 600, rssMb: 150 } },
];

interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** The target ratios against raw Fastify, per configuration name. */
  targets: Record<string, number>;
  /** The target ratio against raw Fastify answering the same bytes, in every configuration. */
  sameBytesTarget?: number;
  /** A target relative to another scenario of the same run (MCP against REST). */
  versus?: { scenario: string; target: number };
  /** Sent with If-None-Match holding the ETag the same request without it gets: each answer is a 304. */
  conditional?: boolean;
  /** A problem with a 2xx answer's body, or null (MCP reports failures inside a 200). */
  bodyProblem?: (body: string) => string | null;
}

const TRANSFORM_INPUT = { expression: '$sum(items.price)', data: { items: [{ price: 1 }, { price: 2 }, { price: 3 }] } };
const REST_UNCACHED = 'POST json-transform/invoke (uncached, persisted)';
const REST_CACHE_HIT = 'POST json-transform/invoke (cache hit)';
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const MCP_CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'json-transform', arguments: TRANSFORM_INPUT } });
/** MCP 2026-07-28: no initialize; the envelope in `_meta` and the routing headers on every request. */
const MCP_2026_HEADERS = { ...MCP_HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'json-transform' };
const MCP_2026_CALL = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'json-transform', arguments: TRANSFORM_INPUT, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } },
});
const mcpProblem = (body: string) => (/"isError":true|"error":\{/.test(body) ? body.slice(0, 300) : null);

const SCENARIOS: Scenario[] = [
  { name: 'GET /v1/tools', method: 'GET', path: '/v1/tools', targets: { embedded: 0.4, 'postgres+redis': 0.3 }, sameBytesTarget: 0.9 },
  {
    name: 'GET /v1/tools (conditional, 304)',
    method: 'GET',
    path: '/v1/tools',
    headers: { 'accept-encoding': 'gzip' },
    conditional: true,
    targets: { embedded: 0.7, postgres: 0.7, 'postgres+redis': 0.7 },
  },
  // Issue 32: our own cost under ~50 µs a request, i.e. at least 0.6 of the same bytes from raw Fastify.
  { name: 'GET /v1/tools/json-transform', method: 'GET', path: '/v1/tools/json-transform', targets: {}, sameBytesTarget: 0.6 },
  {
    name: REST_UNCACHED,
    method: 'POST',
    path: '/v1/tools/json-transform/invoke',
    headers: { 'content-type': 'application/json', 'cache-control': 'no-cache' },
    body: JSON.stringify({
      tool_id: 'json-transform',
      inputs: TRANSFORM_INPUT,
      options: { cache: false },
    }),
    targets: { postgres: 0.08, 'postgres+redis': 0.08 },
    sameBytesTarget: 0.35,
  },
  {
    name: REST_CACHE_HIT,
    method: 'POST',
    path: '/v1/tools/json-transform/invoke',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(TRANSFORM_INPUT),
    targets: { embedded: 0.3, postgres: 0.3, 'postgres+redis': 0.3 },
    sameBytesTarget: 0.6,
  },
  {
    name: 'MCP tools/call json-transform (uncached, persisted)',
    method: 'POST',
    path: '/v1/mcp',
    headers: { ...MCP_HEADERS, 'cache-control': 'no-cache' },
    body: MCP_CALL,
    targets: {},
    versus: { scenario: REST_UNCACHED, target: 0.9 },
    bodyProblem: mcpProblem,
  },
  {
    name: 'MCP tools/call json-transform (cache hit)',
    method: 'POST',
    path: '/v1/mcp',
    headers: MCP_HEADERS,
    body: MCP_CALL,
    targets: {},
    versus: { scenario: REST_CACHE_HIT, target: 0.9 },
    bodyProblem: mcpProblem,
  },
  {
    name: 'MCP 2026-07-28 tools/call json-transform (uncached, persisted)',
    method: 'POST',
    path: '/v1/mcp',
    headers: { ...MCP_2026_HEADERS, 'cache-control': 'no-cache' },
    body: MCP_2026_CALL,
    targets: {},
    versus: { scenario: REST_UNCACHED, target: 0.9 },
    bodyProblem: mcpProblem,
  },
  {
    name: 'MCP 2026-07-28 tools/call json-transform (cache hit)',
    method: 'POST',
    path: '/v1/mcp',
    headers: MCP_2026_HEADERS,
    body: MCP_2026_CALL,
    targets: {},
    versus: { scenario: REST_CACHE_HIT, target: 0.9 },
    bodyProblem: mcpProblem,
  },
];

/** Service settings every configuration shares; a configuration's resources add to them. */
const SERVICE_ENV = {
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  SHUTDOWN_GRACE_SECONDS: '1',
  // Empty means unset to the service: nothing leaks in from the caller's environment.
  DATABASE_URL: '',
  REDIS_URL: '',
};

/** Aborted by Ctrl-C / SIGTERM: the running step stops, and every cleanup still runs. */
const aborter = new AbortController();

async function main(): Promise<void> {
  if (!(DURATION_SECONDS >= 1)) throw new Error(`BENCH_DURATION must be a number of seconds >= 1, not ${process.env.BENCH_DURATION}`);
  const onSignal = (name: NodeJS.Signals) => {
    if (aborter.signal.aborted) process.exit(130); // a second Ctrl-C: stop waiting for cleanup
    console.error(`\n${name}: stopping, cleaning up (again to force)`);
    aborter.abort(new Error(`interrupted by ${name}`));
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);

  // Always build: dist/ then matches the sources being measured (tsc is incremental, so a no-op build is quick).
  console.log('building the service (npm run build)…');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (!existsSync(path.join(ROOT, 'dist/src/main.js'))) {
    throw new Error('dist/src/main.js missing after the build (a stale dist/.tsbuildinfo? delete it and retry)');
  }

  const report: BenchReport = {
    startedAt: new Date().toISOString(),
    durationSeconds: DURATION_SECONDS,
    warmupSeconds: WARMUP_SECONDS,
    connections: CONNECTIONS,
    machine: { node: process.version, cpus: cpus().length, platform: `${process.platform} ${process.arch}` },
    configurations: [],
  };
  const configurations = CONFIGURATIONS.filter((c) => ONLY_CONFIGURATIONS?.includes(c.name) ?? true);
  if (configurations.length === 0) throw new Error(`BENCH_CONFIGURATIONS names none of: ${CONFIGURATIONS.map((c) => c.name).join(', ')}`);
  for (const configuration of configurations) {
    console.log(`\n== ${configuration.name}`);
    report.configurations.push(await benchConfiguration(configuration, aborter.signal));
  }

  const { text, problems } = formatReport(report);
  console.log(`\n${text}`);
  await mkdir(path.dirname(RESULTS_FILE), { recursive: true });
  await writeFile(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nwritten: ${path.relative(ROOT, RESULTS_FILE)}`);
  if (problems.length > 0) process.exitCode = 1;
}

async function benchConfiguration(configuration: Configuration, signal: AbortSignal): Promise<ConfigurationResult> {
  const cleanups: Array<() => Promise<void>> = [];
  try {
    const env: Record<string, string> = {};
    for (const resource of configuration.resources) {
      const { env: added, cleanup } = await resource(signal);
      cleanups.push(cleanup);
      Object.assign(env, added);
      signal.throwIfAborted();
    }

    const baselinePort = await freePort();
    const baselineUrl = `http://127.0.0.1:${baselinePort}/hello`;
    const baseline = await spawnUntilReady({
      name: 'baseline',
      command: process.execPath,
      args: ['-r', 'ts-node/register/transpile-only', 'bench/baseline-server.ts'],
      cwd: ROOT,
      env: { ...process.env, PORT: String(baselinePort) },
      isReady: () => answers2xx(baselineUrl, {}),
      signal,
    });
    cleanups.push(() => baseline.stop());
    const baselineResult = await measure('baseline GET /hello', { url: baselineUrl }, signal, baseline);
    await baseline.stop();

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const serviceEnv = { ...process.env, ...SERVICE_ENV, ...env, PORT: String(port) };
    const key = provisionBenchKey(serviceEnv);
    const auth = { authorization: `Bearer ${key}` };
    const service = await spawnBuiltService({
      name: `service (${configuration.name})`,
      env: serviceEnv,
      isReady: () => answers2xx(`${base}/v1/tools`, auth),
      timeoutMs: SERVICE_READY_TIMEOUT_MS,
      signal,
    });
    cleanups.push(() => service.stop());
    const rssMbReady = service.rssMb();
    console.log(`service ready in ${service.startupMs} ms, RSS ${rssMbReady} MiB`);

    const scenarios: ScenarioResult[] = [];
    const requestOf = ({ path: at, method, headers, body }: Scenario): LoadRequest => ({ url: base + at, method, headers: { ...auth, ...headers }, body });
    for (const scenario of SCENARIOS.filter((s) => s.name.includes(ONLY_SCENARIOS))) {
      const request = scenario.conditional ? await revalidating(requestOf(scenario)) : requestOf(scenario);
      const { problem: probeFailure, answer } = await probe(request, scenario.bodyProblem);
      if (probeFailure) console.error(`!!! ${scenario.name}: a single request did not answer ${request.expectedStatus ?? '2xx'}: ${probeFailure}`);
      const result = await measure(scenario.name, request, signal, service);
      const replay = await measureReplay(scenario.name, answer, request, signal);
      const target = scenario.targets[configuration.name] ?? null;
      const other = scenario.versus && SCENARIOS.find((candidate) => candidate.name === scenario.versus!.scenario);
      const versus = other ? { scenario: other.name, ...(await pairedRatio(requestOf(other), request, signal)), target: scenario.versus!.target } : null;
      const sameBytes = { requestsPerSecond: replay.requestsPerSecond, ratio: result.requestsPerSecond / replay.requestsPerSecond, target: scenario.sameBytesTarget ?? null, cpuUsPerRequest: replay.cpuUsPerRequest };
      scenarios.push({ scenario: scenario.name, ...result, ratio: result.requestsPerSecond / baselineResult.requestsPerSecond, target, versus, sameBytes, probeFailure });
    }

    return {
      configuration: configuration.name,
      startupMs: service.startupMs,
      rssMbReady,
      startupTarget: configuration.startupTarget,
      rssMbAfterLoad: service.rssMb(),
      baseline: baselineResult,
      scenarios,
      serviceOutput: service.outputTail(),
    };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error) => console.error('cleanup failed:', error));
  }
}

/**
 * A warm-up run (discarded), then the measured run, with the CPU time `server` spent per response
 * during it: unlike req/s, it hardly moves when the load generator or another process takes the
 * cores, so it is the steadier measure of what a request costs the server.
 */
async function measure(name: string, request: LoadRequest, signal: AbortSignal, server: ReadyProcess): Promise<MeasuredLoad> {
  await runLoad(request, { connections: CONNECTIONS, durationSeconds: WARMUP_SECONDS, signal });
  const cpuBefore = server.cpuMs();
  const result = await runLoad(request, { connections: CONNECTIONS, durationSeconds: DURATION_SECONDS, signal });
  const cpuUsPerRequest = result.total > 0 ? ((server.cpuMs() - cpuBefore) * 1000) / result.total : null;
  console.log(`${name}: ${result.requestsPerSecond} req/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, server CPU ${cpuUsPerRequest?.toFixed(0)} µs/request, statuses ${JSON.stringify(result.statusCodes)}`);
  return { ...result, cpuUsPerRequest };
}

/**
 * The scenario's throughput over its reference's (MCP over REST), from short runs alternated in
 * groups of four — reference, scenario, scenario, reference — BENCH_DURATION / 2 groups of 2 s
 * runs. The service's own speed swings by tens of percent from one run to the next (JIT and
 * garbage-collector phases: runs of one request back to back measured 2,000 and 3,500 req/s), so a
 * ratio of two long runs is mostly which phase each fell in; many short runs taken in turn put the
 * same phases on both sides. The ratio is the sum over the scenario's runs over the reference's.
 * The scenario was just measured (warm); the reference gets a warm-up of its own, as it may not
 * have run yet (BENCH_SCENARIOS).
 */
async function pairedRatio(reference: LoadRequest, scenario: LoadRequest, signal: AbortSignal): Promise<{ ratio: number; pairs: number[][] }> {
  const run = async (request: LoadRequest, durationSeconds = PAIRED_RUN_SECONDS) =>
    (await runLoad(request, { connections: CONNECTIONS, durationSeconds, signal })).requestsPerSecond;
  await run(reference, WARMUP_SECONDS);
  const groups: number[][] = [];
  for (let group = 0; group < Math.max(2, Math.round(DURATION_SECONDS / PAIRED_RUN_SECONDS)); group++) {
    groups.push([await run(reference), await run(scenario), await run(scenario), await run(reference)]);
  }
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
  const ratios = groups.map(([first, second, third, fourth]) => (second + third) / (first + fourth));
  const ratio = sum(groups.map(([, second, third]) => second + third)) / sum(groups.map(([first, , , fourth]) => first + fourth));
  console.log(`  paired with its reference in ${groups.length} groups of 4 runs: ${ratio.toFixed(3)} (groups ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`);
  return { ratio, pairs: groups };
}

/** The request with If-None-Match holding the ETag its answer has now, expecting 304. */
async function revalidating(request: LoadRequest): Promise<LoadRequest> {
  const response = await fetch(request.url, { method: request.method, headers: request.headers, signal: AbortSignal.timeout(10_000) });
  await response.arrayBuffer();
  const etag = response.headers.get('etag');
  if (!etag) throw new Error(`${request.url} answered ${response.status} with no ETag to revalidate`);
  return { ...request, headers: { ...request.headers, 'if-none-match': etag }, expectedStatus: 304 };
}

async function answers2xx(url: string, headers: Record<string, string>): Promise<boolean> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(1_000) });
  await response.arrayBuffer();
  return response.ok;
}

/**
 * One request before the load, captured for the same-bytes baseline; `problem` is null when it
 * answers 2xx (or its expected status) with a good body, else its status and the start of its body.
 */
async function probe(request: LoadRequest, bodyProblem?: (body: string) => string | null): Promise<{ problem: string | null; answer: CapturedAnswer }> {
  const response = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body, signal: AbortSignal.timeout(10_000) });
  const body = await response.text();
  const answer = { status: response.status, headers: Object.fromEntries(response.headers), body };
  if (request.expectedStatus ? response.status !== request.expectedStatus : !response.ok) return { problem: `${response.status} ${body.slice(0, 300)}`, answer };
  return { problem: bodyProblem?.(body) ?? null, answer };
}

/** Raw Fastify answering `answer` (the service's own answer to `request`), loaded the same way. */
async function measureReplay(name: string, answer: CapturedAnswer, request: LoadRequest, signal: AbortSignal): Promise<MeasuredLoad> {
  const dir = await mkdtemp(path.join(tmpdir(), 'tos-bench-replay-'));
  const file = path.join(dir, 'answer.json');
  await writeFile(file, JSON.stringify(answer));
  const port = await freePort();
  const replay = await spawnUntilReady({
    name: 'same-bytes baseline',
    command: process.execPath,
    args: ['-r', 'ts-node/register/transpile-only', 'bench/replay-server.ts'],
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), REPLAY_FILE: file },
    isReady: async () => (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1_000) })).status === answer.status,
    signal,
  });
  try {
    const url = new URL(request.url);
    return await measure(`same-bytes baseline of ${name}`, { ...request, url: `http://127.0.0.1:${port}${url.pathname}${url.search}` }, signal, replay);
  } finally {
    await replay.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(aborter.signal.aborted ? `${(aborter.signal.reason as Error).message}; everything started was stopped and removed` : error);
  process.exitCode = 1;
});
