import { tally, Tool, ToolError, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';
import { ExpositionError, METRIC_TYPES, parseExposition } from './exposition';
import { queryPrometheus, type QueryRequest } from './prometheus-api';

type Source = 'scrape' | 'query' | 'query_range';

type MetricsCollectInput = ToolInput<typeof definition>;

/** Sample values as JSON can hold them: finite numbers, else Prometheus's spelling (NaN, +Inf, -Inf) or a string result. */
type SampleValue = number | string;

interface OutputSample {
  name: string;
  labels: Record<string, string>;
  value: SampleValue;
  timestamp_ms?: number;
}

interface FamilySummary {
  name: string;
  type: string;
  help: string | null;
  unit: string | null;
  samples: number;
}

type MetricsCollectOutput = ToolOutput<typeof definition>;

const OPENMETRICS = 'application/openmetrics-text';
/** What Prometheus itself asks an exporter for: OpenMetrics first, the text format otherwise. */
const SCRAPE_ACCEPT = `${OPENMETRICS};version=1.0.0;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1`;
/** Largest exposition read (node_exporter with many disks serves ~1 MiB). */
const MAX_EXPOSITION_BYTES = 16 * 1024 * 1024;
const TIME_PATTERN = '^(\\d{1,12}(\\.\\d{1,9})?|\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2}))$';

const definition = defineTool({
  id: 'metrics-collect',
  name: 'Metrics Collect',
  category: 'monitoring',
  description:
    "Scrapes a Prometheus exposition endpoint (text format 0.0.4 or OpenMetrics: counters, gauges, histograms, summaries, labels, HELP/TYPE/UNIT) or runs a PromQL instant or range query against a Prometheus server; returns parsed samples, optionally filtered by metric name and labels, bounded by max_samples. A query's URL defaults to the service's PROMETHEUS_URL.",
  version: '1.0.0',
  cacheable: true,
  cache_ttl: 15,
  effects: 'read',
  open_world: true,
  timeout: 60,
  rate_limit: 120,
  config: {
    PROMETHEUS_URL: { type: 'url', description: 'Base URL of the Prometheus server queries go to when the call names none (e.g. http://prometheus:9090).' },
  },
  input: {
    type: 'object',
    properties: {
      source: { type: 'string', enum: ['scrape', 'query', 'query_range'], default: 'scrape', description: 'scrape: read an exposition endpoint; query / query_range: PromQL against a Prometheus server.' },
      url: {
        type: 'string',
        maxLength: 2048,
        pattern: '^https?://',
        description: 'scrape: the exposition URL (e.g. http://app:9100/metrics). query: the Prometheus base URL (PROMETHEUS_URL when omitted).',
      },
      query: { type: 'string', maxLength: 4000, description: 'PromQL expression (query and query_range).' },
      time: { type: 'string', maxLength: 40, pattern: TIME_PATTERN, description: 'Evaluation time of an instant query: RFC 3339 or Unix seconds; now when omitted.' },
      start: { type: 'string', maxLength: 40, pattern: TIME_PATTERN, description: 'Start of a range query: RFC 3339 or Unix seconds.' },
      end: { type: 'string', maxLength: 40, pattern: TIME_PATTERN, description: 'End of a range query: RFC 3339 or Unix seconds.' },
      step: { type: 'string', maxLength: 20, pattern: '^(\\d+(\\.\\d+)?|(\\d+(ms|s|m|h|d|w|y))+)$', description: 'Resolution of a range query: a duration (15s, 1m) or seconds.' },
      names: {
        type: 'array',
        maxItems: 50,
        items: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[a-zA-Z_:*][a-zA-Z0-9_:*]*$' },
        description: 'Keep only samples whose metric or family name matches one of these (* is a wildcard: http_*).',
      },
      labels: {
        type: 'object',
        maxProperties: 20,
        additionalProperties: { type: 'string', maxLength: 256 },
        description: 'Keep only samples with all these label values (exact).',
      },
      max_samples: { type: 'integer', minimum: 1, maximum: 10_000, default: 1000, description: 'Most samples returned; `total` tells how many matched.' },
      timeout_ms: { type: 'integer', minimum: 100, maximum: 55_000, default: 10_000, description: 'Time allowed for the scrape or query.' },
    },
  },
  output: {
    type: 'object',
    properties: {
      source: { type: 'string', enum: ['scrape', 'query', 'query_range'], description: 'What was done.' },
      result_type: {
        type: 'string',
        enum: ['prometheus-text', 'openmetrics', 'vector', 'matrix', 'scalar', 'string'],
        description: 'scrape: the exposition format served; query: the PromQL result type.',
      },
      families: {
        type: 'array',
        description: 'scrape: metric families with returned samples (name, type, help, unit, samples); empty for queries.',
        items: {
          type: 'object',
          properties: { name: { type: 'string' }, type: { type: 'string', enum: [...METRIC_TYPES] }, help: { type: ['string', 'null'] }, unit: { type: ['string', 'null'] }, samples: { type: 'integer' } },
        },
      },
      samples: {
        type: 'array',
        description: 'Samples: name, labels, value (a number; NaN, +Inf and -Inf as strings) and timestamp_ms when known. A range query gives one sample per point.',
        items: {
          type: 'object',
          properties: { name: { type: 'string' }, labels: { type: 'object', additionalProperties: { type: 'string' } }, value: { type: ['number', 'string'] }, timestamp_ms: { type: 'integer' } },
          required: ['name', 'labels', 'value'],
        },
      },
      count: { type: 'integer', description: 'Samples returned.' },
      total: { type: 'integer', description: 'Samples that matched the filters.' },
      truncated: { type: 'boolean', description: 'True when max_samples cut the samples (or the exposition was larger than 16 MiB).' },
      warnings: { type: 'array', items: { type: 'string' }, description: "Prometheus's warnings about a query." },
    },
    required: ['source', 'result_type', 'families', 'samples', 'count', 'total', 'truncated', 'warnings'],
  },
  examples: [
    {
      name: "Scrape an exporter's counters",
      input: { url: 'http://exporter.example.test:9091/metrics', names: ['shop_orders*'] },
      output: {
        source: 'scrape',
        result_type: 'openmetrics',
        families: [{ name: 'shop_orders', type: 'counter', help: 'Orders placed, by status.', unit: null, samples: 2 }],
        samples: [
          { name: 'shop_orders_total', labels: { status: 'paid' }, value: 42 },
          { name: 'shop_orders_total', labels: { status: 'failed' }, value: 3 },
        ],
        count: 2,
        total: 2,
        truncated: false,
        warnings: [],
      },
    },
    {
      name: 'Ask Prometheus whether a target is up',
      input: { source: 'query', url: 'http://prometheus.example.test:9090', query: 'up{job="shop"}' },
      output: {
        source: 'query',
        result_type: 'vector',
        families: [],
        samples: [{ name: 'up', labels: { instance: 'exporter.example.test:9091', job: 'shop' }, value: 1, timestamp_ms: 1763837400000 }],
        count: 1,
        total: 1,
        truncated: false,
        warnings: [],
      },
      varies: ['samples.0.timestamp_ms'],
    },
  ],
});

@Tool(definition)
export class MetricsCollectTool implements ToolHandler<typeof definition> {
  async execute(input: MetricsCollectInput, ctx: ToolContext<typeof definition>): Promise<MetricsCollectOutput> {
    const keep = sampleFilter(input);
    return input.source === 'scrape' ? scrape(input, ctx, keep) : query(input, ctx, keep);
  }
}

async function scrape(input: MetricsCollectInput, ctx: ToolContext, keep: SampleFilter): Promise<MetricsCollectOutput> {
  if (!input.url) throw ToolError.invalidInput('url', 'the exposition URL to scrape');
  const response = await ctx.http.request(input.url, { headers: { accept: SCRAPE_ACCEPT }, timeoutMs: input.timeout_ms, maxResponseBytes: MAX_EXPOSITION_BYTES, parameter: 'url' });
  if (response.status < 200 || response.status >= 300) throw ToolError.fromResponse('exporter', response);
  const openMetrics = (response.headers['content-type'] ?? '').startsWith(OPENMETRICS);
  const body = response.text();
  // A cut body ends mid-line: parse the whole lines only.
  const text = response.truncated ? body.slice(0, body.lastIndexOf('\n') + 1) : body;
  let parsed: Awaited<ReturnType<typeof parseExposition>>;
  try {
    parsed = await parseExposition(text, openMetrics, ctx.signal);
  } catch (err) {
    if (!(err instanceof ExpositionError)) throw err;
    throw new ToolError(`The exposition at url is malformed (${err.message})`, { details: { line: err.line }, suggestion: 'Check the exporter: Prometheus would fail this scrape too' });
  }
  const matching = parsed.samples.filter((sample) => keep(sample.name, sample.labels, sample.family.name));
  const returned = matching.slice(0, input.max_samples);
  const counts = tally(returned, (sample) => sample.family);
  return {
    source: 'scrape',
    result_type: openMetrics ? 'openmetrics' : 'prometheus-text',
    families: [...counts].map(([family, samples]) => ({ name: family.name, type: family.type, help: family.help, unit: family.unit, samples })),
    samples: returned.map(({ name, labels, value, timestamp_ms }) => ({ name, labels, value: jsonValue(value), ...(timestamp_ms !== undefined && { timestamp_ms }) })),
    count: returned.length,
    total: matching.length,
    truncated: matching.length > returned.length || response.truncated,
    warnings: [],
  };
}

async function query(input: MetricsCollectInput, ctx: ToolContext, keep: SampleFilter): Promise<MetricsCollectOutput> {
  const baseUrl = input.url ?? (ctx.config.PROMETHEUS_URL as string | undefined);
  if (!baseUrl) throw ToolError.invalidInput('url', 'the Prometheus base URL (or PROMETHEUS_URL set on the service)');
  if (!input.query) throw ToolError.invalidInput('query', 'a PromQL expression');
  const request: QueryRequest = { baseUrl, params: { query: input.query }, range: input.source === 'query_range', timeoutMs: input.timeout_ms };
  if (request.range) {
    for (const parameter of ['start', 'end', 'step'] as const) {
      if (!input[parameter]) throw ToolError.invalidInput(parameter, `${parameter} of the range query`);
      request.params[parameter] = input[parameter];
    }
  } else if (input.time) request.params.time = input.time;
  const answer = await queryPrometheus(ctx, request);
  const matching = answer.points.filter((point) => keep(point.metric.__name__ ?? '', withoutName(point.metric)));
  const returned = matching.slice(0, input.max_samples);
  return {
    source: input.source,
    result_type: answer.resultType,
    families: [],
    samples: returned.map((point) => ({
      name: point.metric.__name__ ?? '',
      labels: withoutName(point.metric),
      value: answer.resultType === 'string' ? point.value : jsonValue(Number(point.value)),
      timestamp_ms: Math.round(point.timestampSeconds * 1000),
    })),
    count: returned.length,
    total: matching.length,
    truncated: matching.length > returned.length,
    warnings: answer.warnings,
  };
}

type SampleFilter = (name: string, labels: Record<string, string>, family?: string) => boolean;

function sampleFilter(input: MetricsCollectInput): SampleFilter {
  const patterns = (input.names ?? []).map((name) => new RegExp(`^${name.replace(/\*/g, '.*')}$`));
  const labels = Object.entries(input.labels ?? {});
  return (name, sampleLabels, family) =>
    (patterns.length === 0 || patterns.some((pattern) => pattern.test(name) || (family !== undefined && pattern.test(family)))) &&
    labels.every(([label, value]) => sampleLabels[label] === value);
}

function withoutName(metric: Record<string, string>): Record<string, string> {
  const { __name__: _name, ...labels } = metric;
  return labels;
}

function jsonValue(value: number): SampleValue {
  if (Number.isFinite(value)) return value;
  return Number.isNaN(value) ? 'NaN' : value > 0 ? '+Inf' : '-Inf';
}
