/**
 * One load run: the autocannon CLI in its own process (so the load generator is not sharing the
 * runner's event loop), its --json result reduced to the numbers the report shows.
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';

export interface LoadRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** The status every answer should have, when not any 2xx (a conditional GET's 304). */
  expectedStatus?: number;
}

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Responses counted in the run. */
  total: number;
  /** Average bytes per response, headers included. */
  bytesPerResponse: number;
  /** Answers other than 2xx, or other than `expectedStatus` when the request has one. */
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Count per HTTP status, e.g. { "200": 51234 }. */
  statusCodes: Record<string, number>;
}

/** The part of autocannon's result object that we read. */
interface AutocannonJson {
  requests: { average: number };
  throughput: { average: number };
  latency: { p50: number; p99: number; totalCount: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodeStats?: Record<string, { count: number }>;
}

const AUTOCANNON = path.join(__dirname, '..', 'node_modules', 'autocannon', 'autocannon.js');
/** autocannon stops itself after the duration; this is the hard stop if it does not. */
const OVERRUN_MS = 30_000;

export function runLoad(
  request: LoadRequest,
  { connections, durationSeconds, signal, overallRate }: { connections: number; durationSeconds: number; signal?: AbortSignal; overallRate?: number },
): Promise<LoadResult> {
  const args = [AUTOCANNON, '--json', '-c', String(connections), '-d', String(durationSeconds), '-m', request.method ?? 'GET'];
  // Paced load (requests per second across all connections) instead of as fast as the target answers.
  if (overallRate !== undefined) args.push('-R', String(overallRate));
  for (const [name, value] of Object.entries(request.headers ?? {})) args.push('-H', `${name}=${value}`);
  if (request.body !== undefined) args.push('-b', request.body);
  args.push(request.url);

  const timeout = durationSeconds * 1000 + OVERRUN_MS;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { timeout, killSignal: 'SIGKILL', signal, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`autocannon failed on ${request.url}: ${error.message}\n${stderr}`));
      const json = JSON.parse(stdout.trim().split('\n').pop()!) as AutocannonJson;
      const statusCodes = Object.fromEntries(Object.entries(json.statusCodeStats ?? {}).map(([code, stats]) => [code, stats.count]));
      resolve({
        requestsPerSecond: Math.round(json.requests.average),
        p50Ms: json.latency.p50,
        p99Ms: json.latency.p99,
        total: json.latency.totalCount,
        bytesPerResponse: json.requests.average > 0 ? Math.round(json.throughput.average / json.requests.average) : 0,
        non2xx: request.expectedStatus === undefined ? json.non2xx : json.latency.totalCount - (statusCodes[request.expectedStatus] ?? 0),
        errors: json.errors,
        timeouts: json.timeouts,
        statusCodes,
      });
    });
  });
}
