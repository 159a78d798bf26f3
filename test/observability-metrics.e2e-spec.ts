/** Prometheus metrics (docs/operations.md#prometheus-metrics): scraped by a real Prometheus, queried with PromQL. */
import { ObservabilityLifecycle } from '../src/observability/observability.module';
import { useTestApp } from './support/app';
import { DATABASE_MODES } from './support/databases';
import { describeWith } from './support/prerequisites';
import { until } from './support/poll';
import { TestToolsModule } from './support/test-tools.module';
import { findPrometheus, PrometheusServer, startPrometheus } from './observability/prometheus-server';
import { randomBytes } from 'node:crypto';
import { startRecordingServer } from './support/recording-server';

const TOKEN = 'metrics-token-0123456789';
const pglite = DATABASE_MODES.find((m) => m.name === 'pglite')!;
describeWith(findPrometheus(), 'prometheus')('Prometheus metrics', () => {
  const suite = useTestApp(pglite, {
    extensions: [TestToolsModule],
    env: {
      METRICS_TOKEN: TOKEN,
      METRICS_PORT: '0',
      // Webhooks to a loopback receiver, polled often so the test waits little.
      SECRETS_KEY: randomBytes(32).toString('base64'),
      EGRESS_ALLOW: '127.0.0.1',
      WEBHOOK_POLL_MS: '50',
    },
  });
  let prometheus: PrometheusServer | undefined;
  let address: string;

  beforeAll(async () => {
    await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    address = new URL(await suite.t.app.getUrl()).host;
  });
  afterAll(async () => prometheus?.stop());

  const invoke = (toolId: string, payload: object, headers: Record<string, string> = {}, query = '', key = suite.acme.key) =>
    suite.t.request({ method: 'POST', url: `/v1/tools/${toolId}/invoke${query}`, key, payload, headers });

  it('refuses GET /metrics on the main port without METRICS_TOKEN, API keys included', async () => {
    expect((await suite.t.request({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
    expect((await suite.t.request({ method: 'GET', url: '/metrics', key: suite.acme.key })).statusCode).toBe(401);
    const ok = await suite.t.request({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('tos_process_cpu_seconds_total');
    expect(ok.body).toContain('tos_nodejs_eventloop_lag_seconds');
  });

  it('serves the same registry without a token on METRICS_PORT', async () => {
    const port = suite.t.app.get(ObservabilityLifecycle).metricsPort!;
    const response = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/tos_queue_waiting_jobs\{backend="in-process",role="all"\} 0/);
  });

  it('is scraped by Prometheus: requests by route template, executions by tool and status, cache, refusals, replays', async () => {
    for (let i = 0; i < 3; i++) expect((await invoke('json-transform', { expression: 'a + 1', data: { a: i } })).statusCode).toBe(200);
    expect((await invoke('json-transform', { expression: 'a + 1', data: { a: 0 } })).json().cache.hit).toBe(true);
    expect((await invoke('json-transform', { expression: '$error("boom")', data: {} })).statusCode).toBe(400);
    expect((await invoke('test-sleep', { ms: 10 }, {}, '?async=true')).statusCode).toBe(202);
    const pro = await suite.t.createAccount('pro-account', 'pro'); // tool windows bind free and pro accounts
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await invoke('test-limited', {}, {}, '', pro.key)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const idempotent = { 'x-idempotency-key': 'metrics-replay-1' };
    expect((await invoke('json-transform', { expression: '1', data: {} }, idempotent)).statusCode).toBe(200);
    expect((await invoke('json-transform', { expression: '1', data: {} }, idempotent)).headers['idempotent-replayed']).toBe('true');

    prometheus = await startPrometheus([{ address, token: TOKEN }]);
    const value = async (promql: string) => {
      const result = await prometheus!.query(promql);
      return result.length ? Number(result[0].value[1]) : undefined;
    };
    const atLeast = (promql: string, minimum: number) =>
      until(`${promql} >= ${minimum}`, async () => ((await value(promql)) ?? -1) >= minimum ? true : undefined, 30_000, 250);

    await atLeast('sum(tos_http_requests_total{route="/v1/tools/:tool_id/invoke", method="POST", status="200", role="all"})', 7);
    await atLeast('sum(tos_http_requests_total{route="/v1/tools/:tool_id/invoke", status="400"})', 1);
    await atLeast('sum(tos_http_request_duration_seconds_count{route="/v1/tools/:tool_id/invoke"})', 12);
    await atLeast('tos_executions_finished_total{tool="json-transform", status="success"}', 4);
    await atLeast('tos_executions_finished_total{tool="json-transform", status="error"}', 1);
    await atLeast('tos_executions_started_total{tool="test-sleep"}', 1);
    await atLeast('tos_execution_duration_seconds_count{tool="test-sleep", status="success"}', 1);
    await atLeast('tos_cache_lookups_total{result="hit"}', 1);
    await atLeast('tos_cache_lookups_total{result="miss"}', 3);
    await atLeast('tos_rate_limit_refusals_total{window="tool"}', 1);
    await atLeast('tos_idempotent_replays_total', 1);
    await atLeast('tos_queue_oldest_job_age_seconds{backend="in-process"} + 1', 1);
    // Route templates only: no label holds a raw URL with a tool id or an execution id in it.
    expect(await prometheus.query('tos_http_requests_total{route=~".*(json-transform|exec_).*"}')).toEqual([]);
  }, 60_000);

  it('counts webhook attempts by outcome, disabled subscriptions and the outbox depth', async () => {
    const receiver = await startRecordingServer((request) => ({ status: request.url === '/gone' ? 410 : 200 }));
    try {
      const owner = await suite.t.createAccount('hooks-metrics');
      for (const path of ['/fine', '/gone']) {
        const res = await suite.t.request({ method: 'POST', url: '/v1/webhooks', key: owner.key, payload: { url: `${receiver.url}${path}`, events: ['execution.completed'] } });
        expect(res.statusCode).toBe(201);
      }
      expect((await invoke('json-transform', { expression: '7', data: {} }, {}, '', owner.key)).statusCode).toBe(200);
      const port = suite.t.app.get(ObservabilityLifecycle).metricsPort!;
      const metrics = await until('both attempts counted', async () => {
        const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        return /tos_webhook_subscriptions_disabled_total\{role="all"\} 1$/m.test(text) ? text : undefined;
      });
      expect(metrics).toMatch(/^tos_webhook_attempts_total\{outcome="delivered",role="all"\} 1$/m);
      expect(metrics).toMatch(/^tos_webhook_attempts_total\{outcome="gone",role="all"\} 1$/m);
      expect(metrics).toMatch(/^tos_webhook_attempt_duration_seconds_count\{role="all"\} 2$/m);
      // The audit ran at the dispatcher's first pass (and every 15 s after): the gauges are there.
      expect(metrics).toMatch(/^tos_webhook_outbox_deliveries\{state="pending",role="all"\} \d+$/m);
      expect(metrics).toMatch(/^tos_webhook_oldest_due_age_seconds\{role="all"\} [\d.e+-]+$/m);
      expect(metrics).toMatch(/^tos_webhook_subscriptions_disabled\{role="all"\} \d+$/m);
    } finally {
      await receiver.close();
    }
  });
});
