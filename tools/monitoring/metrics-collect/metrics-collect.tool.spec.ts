import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runTool, toolFailure } from '@tos/sdk/testing';
import { freePort } from '../../../test/support/free-port';
import { startExporter, type Exporter } from '../../../test/support/netmon/exporter';
import { findPrometheus, startPrometheus, type HttpDaemon } from '../../../test/support/netmon/prometheus';
import { describeWith } from '../../../test/support/prerequisites';
import { MetricsCollectTool } from './metrics-collect.tool';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number | string;
  timestamp_ms?: number;
}
interface Output {
  source: string;
  result_type: string;
  families: { name: string; type: string; help: string | null; unit: string | null; samples: number }[];
  samples: Sample[];
  count: number;
  total: number;
  truncated: boolean;
  warnings: string[];
}

const collect = (input: Record<string, unknown>, config?: Record<string, string>) => runTool<Output>(MetricsCollectTool, input, { config });

describeWith(findPrometheus(), 'prometheus')('metrics-collect', () => {
  let exporter: Exporter;
  let textExporter: Exporter;
  let prometheus: HttpDaemon;
  /** Serves whatever the test puts at a path (malformed expositions, 503s), or never answers on /hang. */
  const pages = new Map<string, { status: number; type: string; body: string }>();
  let misc: Server;
  let miscBase: string;

  beforeAll(async () => {
    exporter = await startExporter();
    textExporter = await startExporter({ textOnly: true });
    prometheus = await startPrometheus([{ job: 'shop', target: `127.0.0.1:${exporter.port}`, instance: 'shop-1' }]);
    misc = createServer((req, res) => {
      const page = pages.get(req.url ?? '');
      if (page) res.writeHead(page.status, { 'content-type': page.type, 'retry-after': '7' }).end(page.body);
    });
    await new Promise<void>((resolve) => misc.listen(0, '127.0.0.1', resolve));
    miscBase = `http://127.0.0.1:${(misc.address() as AddressInfo).port}`;
  }, 60_000);
  afterAll(async () => {
    misc?.closeAllConnections();
    await Promise.all([exporter?.stop(), textExporter?.stop(), prometheus?.stop(), misc && new Promise((resolve) => misc.close(resolve))]);
  });

  describe('scrape', () => {
    it('reads an OpenMetrics exposition: every family, its type and help, escaped label values', async () => {
      const out = await collect({ url: exporter.url });
      expect(out).toMatchObject({ source: 'scrape', result_type: 'openmetrics', total: 14, count: 14, truncated: false });
      expect(out.families).toEqual([
        { name: 'shop_orders', type: 'counter', help: 'Orders placed, by status.', unit: null, samples: 2 },
        { name: 'shop_queue_depth', type: 'gauge', help: 'Jobs waiting in the queue.', unit: null, samples: 1 },
        { name: 'shop_checkout_seconds', type: 'histogram', help: 'Checkout time.', unit: null, samples: 6 },
        { name: 'shop_payload_bytes', type: 'summary', help: 'Request payload size.', unit: null, samples: 4 },
        { name: 'shop_build_info', type: 'gauge', help: 'Build of the shop, with "quotes" and a \\ backslash.', unit: null, samples: 1 },
      ]);
      expect(out.samples).toContainEqual({ name: 'shop_checkout_seconds_bucket', labels: { le: '+Inf' }, value: 4 });
      expect(out.samples).toContainEqual({ name: 'shop_checkout_seconds_sum', labels: {}, value: 2.55 });
      expect(out.samples).toContainEqual({ name: 'shop_payload_bytes', labels: { quantile: '0.9' }, value: 300 });
      expect(out.samples).toContainEqual({ name: 'shop_build_info', labels: { version: '1.4.2', note: 'line one\nline "two"' }, value: 1 });
    });

    it('reads the text format from an exporter that serves only that', async () => {
      const out = await collect({ url: textExporter.url, names: ['shop_orders*', 'shop_queue_depth'] });
      expect(out.result_type).toBe('prometheus-text');
      expect(out.families.map(({ name, type }) => [name, type])).toEqual([
        ['shop_orders_total', 'counter'],
        ['shop_queue_depth', 'gauge'],
      ]);
      expect(out.samples).toEqual([
        { name: 'shop_orders_total', labels: { status: 'paid' }, value: 42 },
        { name: 'shop_orders_total', labels: { status: 'failed' }, value: 3 },
        { name: 'shop_queue_depth', labels: {}, value: 7 },
      ]);
    });

    it('filters by name pattern and labels, and caps the samples', async () => {
      await expect(collect({ url: exporter.url, names: ['shop_checkout_*'], labels: { le: '0.5' } })).resolves.toMatchObject({
        samples: [{ name: 'shop_checkout_seconds_bucket', labels: { le: '0.5' }, value: 3 }],
        total: 1,
      });
      const capped = await collect({ url: exporter.url, names: ['shop_checkout_seconds'], max_samples: 2 });
      expect(capped).toMatchObject({ count: 2, total: 6, truncated: true, families: [{ name: 'shop_checkout_seconds', samples: 2 }] });
    });

    it('reads timestamps, NaN and infinities, exemplars, units and untyped samples', async () => {
      pages.set('/om', {
        status: 200,
        type: 'application/openmetrics-text; version=1.0.0; charset=utf-8',
        body: [
          '# TYPE job_seconds histogram',
          '# UNIT job_seconds seconds',
          'job_seconds_bucket{le="1"} 2 # {trace_id="abc"} 0.4 1700000000.123',
          'job_seconds_bucket{le="+Inf"} 3 1700000000.5',
          'job_seconds_count 3',
          'job_seconds_sum NaN',
          'job_seconds_created 1699999999',
          '# EOF',
          'ignored_after_eof 1',
        ].join('\n'),
      });
      const om = await collect({ url: `${miscBase}/om` });
      expect(om.families).toEqual([{ name: 'job_seconds', type: 'histogram', help: null, unit: 'seconds', samples: 5 }]);
      expect(om.samples).toEqual([
        { name: 'job_seconds_bucket', labels: { le: '1' }, value: 2 },
        { name: 'job_seconds_bucket', labels: { le: '+Inf' }, value: 3, timestamp_ms: 1700000000500 },
        { name: 'job_seconds_count', labels: {}, value: 3 },
        { name: 'job_seconds_sum', labels: {}, value: 'NaN' },
        { name: 'job_seconds_created', labels: {}, value: 1699999999 },
      ]);
      pages.set('/text', { status: 200, type: 'text/plain; version=0.0.4', body: 'temperature{room="hall" , } -Inf 1700000000000\nloose_metric 12\n' });
      await expect(collect({ url: `${miscBase}/text` })).resolves.toMatchObject({
        families: [
          { name: 'temperature', type: 'untyped' },
          { name: 'loose_metric', type: 'untyped' },
        ],
        samples: [
          { name: 'temperature', labels: { room: 'hall' }, value: '-Inf', timestamp_ms: 1700000000000 },
          { name: 'loose_metric', labels: {}, value: 12 },
        ],
      });
    });

    it('refuses a malformed exposition, naming the line', async () => {
      pages.set('/broken', { status: 200, type: 'text/plain', body: '# TYPE ok gauge\nok 1\nbroken{label=unquoted} 2\n' });
      const err = await toolFailure(collect({ url: `${miscBase}/broken` }));
      expect(err).toMatchObject({ code: 'TOOL_ERROR', retryable: false, details: { line: 3 } });
      expect(err.message).toContain('line 3: expected ="…" after label label');
    });
  });

  describe('PromQL against a real Prometheus', () => {
    it('runs an instant query', async () => {
      const out = await collect({ source: 'query', url: prometheus.url, query: 'up{job="shop"}' });
      expect(out).toMatchObject({ source: 'query', result_type: 'vector', families: [], count: 1, total: 1, truncated: false, warnings: [] });
      expect(out.samples).toEqual([{ name: 'up', labels: { instance: 'shop-1', job: 'shop' }, value: 1, timestamp_ms: expect.any(Number) }]);
      expect(Math.abs(out.samples[0].timestamp_ms! - Date.now())).toBeLessThan(60_000);
    });

    it('reads what Prometheus scraped from the exporter, at a given time', async () => {
      const out = await collect({ source: 'query', url: prometheus.url, query: 'sort_desc(shop_orders_total)', time: String(Date.now() / 1000) });
      expect(out.samples.map(({ name, labels, value }) => ({ name, labels, value }))).toEqual([
        { name: 'shop_orders_total', labels: { instance: 'shop-1', job: 'shop', status: 'paid' }, value: 42 },
        { name: 'shop_orders_total', labels: { instance: 'shop-1', job: 'shop', status: 'failed' }, value: 3 },
      ]);
    });

    it('runs a range query: one sample per point', async () => {
      const end = Date.now() / 1000;
      const out = await collect({ source: 'query_range', url: prometheus.url, query: 'shop_queue_depth', start: String(end - 30), end: String(end), step: '1s' });
      expect(out.result_type).toBe('matrix');
      expect(out.count).toBeGreaterThanOrEqual(1);
      expect(new Set(out.samples.map((sample) => sample.value))).toEqual(new Set([7]));
      const times = out.samples.map((sample) => sample.timestamp_ms!);
      expect(times).toEqual([...times].sort());
    });

    it('returns scalar and string results, using PROMETHEUS_URL when no url is given', async () => {
      await expect(collect({ source: 'query', query: 'scalar(shop_queue_depth) * 2' }, { PROMETHEUS_URL: prometheus.url })).resolves.toMatchObject({
        result_type: 'scalar',
        samples: [{ name: '', labels: {}, value: 14 }],
      });
      await expect(collect({ source: 'query', query: '"hello"' }, { PROMETHEUS_URL: prometheus.url })).resolves.toMatchObject({ result_type: 'string', samples: [{ value: 'hello' }] });
    });

    it('refuses a query Prometheus cannot parse, naming the parameter it names', async () => {
      const bad = await toolFailure(collect({ source: 'query', url: prometheus.url, query: 'sum(up{' }));
      expect(bad).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'query' } });
      expect(bad.message).toContain('parse error');
      const end = Date.now() / 1000;
      const backwards = await toolFailure(collect({ source: 'query_range', url: prometheus.url, query: 'up', start: String(end), end: String(end - 60), step: '1s' }));
      expect(backwards).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'end' } });
    });
  });

  describe('bad input', () => {
    it.each([
      ['source', { source: 'push' }],
      ['url', { url: 'ftp://x/metrics' }],
      ['names[0]', { url: 'http://127.0.0.1/metrics', names: ['bad name'] }],
      ['max_samples', { url: 'http://127.0.0.1/metrics', max_samples: 100_000 }],
      ['time', { source: 'query', url: 'http://127.0.0.1', query: 'up', time: 'yesterday' }],
      ['url', { source: 'scrape' }],
      ['url', { source: 'query', query: 'up' }],
      ['query', { source: 'query', url: 'http://127.0.0.1' }],
      ['step', { source: 'query_range', url: 'http://127.0.0.1', query: 'up', start: '1', end: '2' }],
    ])('refuses a bad or missing %s', async (parameter, input) => {
      const err = await toolFailure(collect(input));
      expect(err).toMatchObject({ code: 'INVALID_INPUT', details: { parameter } });
    });
  });

  describe('upstream failures', () => {
    it('an exporter answering 503 is retryable, with its Retry-After', async () => {
      pages.set('/down', { status: 503, type: 'text/plain', body: 'overloaded' });
      const err = await toolFailure(collect({ url: `${miscBase}/down` }));
      expect(err).toMatchObject({ code: 'TOOL_ERROR', retryable: true, retryAfter: 7, details: { upstream: { service: 'exporter', status: 503 } } });
    });

    it('a Prometheus that is not there is retryable', async () => {
      const closed = `http://127.0.0.1:${await freePort()}`;
      const err = await toolFailure(collect({ source: 'query', url: closed, query: 'up' }));
      expect(err).toMatchObject({ code: 'TOOL_ERROR', retryable: true });
    });

    it('a 404 (not an exposition endpoint) is not retryable', async () => {
      const err = await toolFailure(collect({ url: `${exporter.url.replace('/metrics', '/nope')}` }));
      expect(err).toMatchObject({ code: 'TOOL_ERROR', retryable: false, details: { upstream: { service: 'exporter', status: 404 } } });
    });
  });

  it('stops at once when cancelled mid-scrape', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled by the test');
    setTimeout(() => controller.abort(reason), 150);
    const started = Date.now();
    await expect(runTool(MetricsCollectTool, { url: `${miscBase}/hang`, timeout_ms: 30_000 }, { signal: controller.signal })).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('refuses a loopback endpoint through the egress policy when it is not allowed', async () => {
    const err = await toolFailure(runTool(MetricsCollectTool, { url: exporter.url }, { egressAllow: '' }));
    expect(err).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'url', expected: 'a public address' } });
    const query = await toolFailure(runTool(MetricsCollectTool, { source: 'query', url: prometheus.url, query: 'up' }, { egressAllow: '' }));
    expect(query).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'url' } });
  });
});
