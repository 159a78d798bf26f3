import type autocannon from 'autocannon';
import { requestHeadersInput, Tool, ToolError, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';

type ProfilingInput = ToolInput<typeof definition>;

interface LatencySummary {
  [member: string]: unknown;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

type ProfilingOutput = ToolOutput<typeof definition>;

const NUMBER = { type: 'number' } as const;
const SAMPLE_MS = 1000;

const definition = defineTool({
  id: 'performance-profiling',
  name: 'Performance Profiling',
  category: 'analysis',
  status: 'beta',
  description:
    "Load profile of an HTTP endpoint with autocannon: bounded connections (≤ 100), duration (≤ 60 s) and optional rate; req/s, latency p50/p90/p99/max, status counts, errors, timeouts, throughput, with live progress. The target must pass the egress policy (it is resolved and checked before the first request, and the load goes to that address only); redirects are not followed and TLS certificates are not verified (autocannon's choice: check them with tls-cert-check). Runs in a worker thread; a cancel stops the load at once. Beta: one target URL per run.",
  version: '1.0.0',
  effects: 'read',
  idempotent: false,
  open_world: true,
  isolated: true,
  timeout: 90,
  task_support: 'optional',
  // It generates load: few runs per key and minute.
  rate_limit: 5,
  input: {
    type: 'object',
    properties: {
      url: { type: 'string', format: 'uri', maxLength: 2048, description: 'The http(s) URL to load.' },
      method: { type: 'string', enum: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'], default: 'GET', description: 'HTTP method.' },
      headers: requestHeadersInput('Request headers of every request (an Authorization); never logged.'),
      body: { type: 'string', maxLength: 100_000, description: 'Request body of every request.' },
      connections: { type: 'integer', minimum: 1, maximum: 100, default: 10, description: 'Concurrent connections.' },
      duration_seconds: { type: 'integer', minimum: 1, maximum: 60, default: 10, description: 'How long to load.' },
      rate: { type: 'integer', minimum: 1, maximum: 10_000, description: 'At most this many requests per second in all; unbounded when omitted.' },
      timeout_ms: { type: 'integer', minimum: 100, maximum: 30_000, default: 10_000, description: 'A request with no answer by then counts as a timeout.' },
    },
    required: ['url'],
  },
  output: {
    type: 'object',
    properties: {
      requests_total: { type: 'integer', description: 'Requests answered.' },
      requests_per_second: { type: 'number', description: 'Mean answered requests per second.' },
      latency_ms: {
        type: 'object',
        description: 'Latency percentiles (p50, p90, p99), max and mean.',
        properties: { p50: NUMBER, p90: NUMBER, p99: NUMBER, max: NUMBER, mean: NUMBER },
      },
      status_counts: { type: 'object', description: 'Answers per status class (1xx … 5xx).' },
      non_2xx: { type: 'integer', description: 'Answers that were not 2xx.' },
      errors: { type: 'integer', description: 'Connection errors (refused, reset).' },
      timeouts: { type: 'integer', description: 'Requests with no answer within timeout_ms.' },
      throughput_bytes_per_second: { type: 'number', description: 'Mean response bytes per second.' },
      duration_seconds: { type: 'number', description: 'How long the load ran.' },
    },
    required: ['requests_total', 'requests_per_second', 'latency_ms', 'status_counts', 'non_2xx', 'errors', 'timeouts', 'throughput_bytes_per_second', 'duration_seconds'],
  },
  examples: [
    {
      name: 'One second of load on a health page',
      input: { url: 'http://status.example.test:8080/healthz', connections: 2, duration_seconds: 1 },
      output: {
        requests_total: 2500,
        requests_per_second: 2500,
        latency_ms: { p50: 0, p90: 1, p99: 2, max: 9, mean: 0.4 },
        status_counts: { '1xx': 0, '2xx': 2500, '3xx': 0, '4xx': 0, '5xx': 0 },
        non_2xx: 0,
        errors: 0,
        timeouts: 0,
        throughput_bytes_per_second: 400_000,
        duration_seconds: 1,
      },
      varies: ['requests_total', 'requests_per_second', 'latency_ms', 'status_counts.2xx', 'throughput_bytes_per_second', 'duration_seconds'],
    },
  ],
});

@Tool(definition)
export class PerformanceProfilingTool implements ToolHandler<typeof definition> {
  async execute(input: ProfilingInput, ctx: ToolContext<typeof definition>): Promise<ProfilingOutput> {
    let target: URL;
    try {
      target = new URL(input.url);
    } catch {
      throw ToolError.invalidInput('url', 'an absolute http(s) URL', input.url);
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') throw ToolError.invalidInput('url', 'an http or https URL', target.protocol);
    // autocannon opens its own sockets: the policy checks the address here, and the load goes to it alone.
    const { address, family } = await ctx.net.resolve(target.hostname, { parameter: 'url' });
    const pinned = new URL(target);
    pinned.hostname = family === 6 ? `[${address}]` : address;
    ctx.signal.throwIfAborted();

    // autocannon loads on the first run, not with the catalogue.
    const { default: runLoad } = await import('autocannon');
    let finish: (err: Error | null, result: autocannon.Result) => void = () => undefined;
    const finished = new Promise<autocannon.Result>((resolve, reject) => (finish = (err, result) => (err ? reject(err) : resolve(result))));
    const options = {
      url: pinned.toString(),
      method: input.method,
      headers: { ...input.headers, host: target.host },
      body: input.body,
      connections: input.connections,
      duration: input.duration_seconds,
      ...(input.rate && { overallRate: input.rate }),
      timeout: Math.ceil(input.timeout_ms / 1000),
      // One sample a second: the per-second rates below are totals over samples.
      sampleInt: SAMPLE_MS,
      ...(target.protocol === 'https:' && { servername: target.hostname }),
      // Inside a worker thread autocannon would skip this step on its own: aggregate the same way everywhere.
      skipAggregateResult: true,
    };
    const instance = runLoad(options, (err, result) => finish(err, result));
    const started = Date.now();
    const progress = setInterval(() => {
      const elapsed = (Date.now() - started) / 1000;
      ctx.progress(Math.min(99, Math.round((elapsed / input.duration_seconds) * 100)), `${Math.floor(elapsed)} of ${input.duration_seconds} s`);
    }, 1000);
    const onAbort = () => instance.stop();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const result = aggregate(runLoad, [await finished], options);
      ctx.signal.throwIfAborted();
      return summary(result);
    } finally {
      clearInterval(progress);
      ctx.signal.removeEventListener('abort', onAbort);
    }
  }
}

/** What aggregateResult returns; `samples` (how many sampleInt intervals the run took) is not in @types/autocannon 7. */
type AggregatedResult = autocannon.Result & { samples: number };

/** autocannon.aggregateResult, which its published types (@types/autocannon 7) do not declare yet. */
function aggregate(runLoad: typeof autocannon, results: autocannon.Result[], options: autocannon.Options): AggregatedResult {
  return (runLoad as unknown as { aggregateResult(results: autocannon.Result[], options: autocannon.Options): AggregatedResult }).aggregateResult(results, options);
}

function summary(result: AggregatedResult): ProfilingOutput {
  const round = (n: number) => Math.round(n * 100) / 100;
  // aggregateResult fills the per-sample `requests`/`throughput` histograms only from histograms handed to it
  // (none for a run's own result), so their averages read 0; its totals and sample count are exact, and
  // the mean of the per-second samples is their total over the samples.
  const perSecond = (total: number) => (result.samples > 0 ? round((total / result.samples) * (1000 / SAMPLE_MS)) : 0);
  return {
    requests_total: result.requests.total,
    requests_per_second: perSecond(result.requests.total),
    latency_ms: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max, mean: round(result.latency.average) },
    status_counts: { '1xx': result['1xx'], '2xx': result['2xx'], '3xx': result['3xx'], '4xx': result['4xx'], '5xx': result['5xx'] },
    non_2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    throughput_bytes_per_second: perSecond(result.throughput.total),
    duration_seconds: round(result.duration),
  };
}
