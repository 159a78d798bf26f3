/** OpenTelemetry traces (docs/operations.md#opentelemetry-traces): the span tree of a sync and an async invoke, exported over OTLP/HTTP. */
import { randomBytes } from 'node:crypto';
import { useTestApp } from './support/app';
import { describeEachEngine } from './support/engines';
import { until } from './support/poll';
import { TestToolsModule } from './support/test-tools.module';
import { OtlpReceiver, ReceivedSpan, startOtlpReceiver } from './observability/otlp-receiver';

/** Distributed: the async execution runs from a Bull job, out of the request's context, so only the job's carrier can link it. */
describeEachEngine('OpenTelemetry traces', (mode) => {
  let receiver: OtlpReceiver;
  /** The collector starts first: the app exports to it from boot, and flushes to it on close. */
  const withCollector = {
    prepare: async () => {
      receiver = await startOtlpReceiver();
      const database = await mode.prepare();
      return {
        env: { ...database.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
        cleanup: async () => {
          await database.cleanup();
          await receiver.stop();
        },
      };
    },
  };
  const suite = useTestApp(withCollector, { extensions: [TestToolsModule] });

  const spanOf = (what: string, match: (span: ReceivedSpan) => boolean) => until(what, async () => receiver.spans.find(match), 15_000, 50);

  it('makes a server span per request under the incoming traceparent, and an execution span under it', async () => {
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const response = await suite.t.request({
      method: 'POST',
      url: '/v1/tools/json-transform/invoke',
      key: suite.acme.key,
      headers: { traceparent: `00-${traceId}-${callerSpanId}-01` },
      payload: { expression: 'secret_value & "!"', data: { secret_value: 'hunter2' } },
    });
    expect(response.statusCode).toBe(200);
    const executionId = response.json().execution_id;

    const server = await spanOf('the request span', (s) => s.traceId === traceId && s.kind === 2);
    expect(server).toMatchObject({ parentSpanId: callerSpanId, name: 'POST /v1/tools/:tool_id/invoke' });
    expect(server.attributes).toMatchObject({ 'http.route': '/v1/tools/:tool_id/invoke', 'http.response.status_code': 200 });
    expect(server.resource['service.name']).toBe('tool-orchestration-service');
    const execution = await spanOf('the execution span', (s) => s.attributes['tos.execution.id'] === executionId);
    expect(execution).toMatchObject({ traceId, parentSpanId: server.spanId, name: 'execute json-transform' });
    expect(execution.attributes).toMatchObject({ 'tos.tool.id': 'json-transform', 'tos.execution.status': 'success' });
    // Never inputs, results or keys.
    const exported = JSON.stringify(receiver.spans);
    expect(exported).not.toContain('hunter2');
    expect(exported).not.toContain(suite.acme.key);
  });

  it('links an async execution to the request that queued it, through the job', async () => {
    const response = await suite.t.request({ method: 'POST', url: '/v1/tools/test-sleep/invoke?async=true', key: suite.acme.key, payload: { ms: 20 } });
    expect(response.statusCode).toBe(202);
    const executionId = response.json().execution_id;
    const execution = await spanOf('the async execution span', (s) => s.attributes['tos.execution.id'] === executionId);
    expect(execution.attributes).toMatchObject({ 'tos.tool.id': 'test-sleep', 'tos.execution.status': 'success' });
    const server = receiver.spans.find((s) => s.spanId === execution.parentSpanId);
    expect(server).toMatchObject({ traceId: execution.traceId, name: 'POST /v1/tools/:tool_id/invoke', kind: 2 });
    expect(server!.parentSpanId).toBeUndefined(); // no incoming traceparent: the request starts the trace
  });
});
