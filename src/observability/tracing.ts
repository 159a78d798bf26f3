import { Context, context, ROOT_CONTEXT, Span, SpanKind, SpanStatusCode, trace, Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { addExecutionObserver, setOutboundObserver, setTracePropagation, TraceCarrier } from '../common/probes';

/** Spans leave in batches; short enough that a trace shows up while one is looking for it. */
const EXPORT_DELAY_MS = 500;
const w3c = new W3CTraceContextPropagator();
const headerGetter = {
  get: (carrier: Record<string, unknown>, key: string) => carrier[key] as string | undefined,
  keys: (carrier: Record<string, unknown>) => Object.keys(carrier),
};

let contextManagerInstalled = false;

/** AsyncLocalStorage carries the active span across awaits; one manager per process. */
function installContextManager(): void {
  if (contextManagerInstalled) return;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  contextManagerInstalled = true;
}

/**
 * OpenTelemetry traces to an OTLP/HTTP collector: a span per request (honouring an incoming
 * `traceparent`), a child per tool execution (in the worker too, through the job's carrier).
 * Attributes name tools, executions, routes and statuses; never inputs, headers or keys.
 */
export class ServiceTracing {
  private readonly provider: BasicTracerProvider;
  readonly tracer: Tracer;
  private readonly uninstall: Array<() => void> = [];

  constructor(endpoint: string, role: string) {
    installContextManager();
    const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` });
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'tool-orchestration-service', 'service.instance.role': role }),
      spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: EXPORT_DELAY_MS })],
    });
    this.tracer = this.provider.getTracer('tool-orchestration-service');
  }

  start(): void {
    setTracePropagation({
      capture: () => {
        const carrier: TraceCarrier = {};
        w3c.inject(context.active(), carrier, { set: (c, k, v) => (c[k] = v) });
        return carrier.traceparent ? carrier : undefined;
      },
      resume: (carrier, fn) => context.with(w3c.extract(ROOT_CONTEXT, carrier, headerGetter), fn),
    });
    this.uninstall.push(() => setTracePropagation(null));
    setOutboundObserver((call, headers, send) =>
      this.tracer.startActiveSpan(
        call.method,
        {
          kind: SpanKind.CLIENT,
          attributes: { 'http.request.method': call.method, 'server.address': call.url.hostname, 'server.port': Number(call.url.port) || (call.url.protocol === 'https:' ? 443 : 80), 'url.scheme': call.url.protocol.replace(':', '') },
        },
        async (span) => {
          w3c.inject(context.active(), headers, { set: (carrier, key, value) => (carrier[key] = value) });
          try {
            const response = await send();
            span.setAttribute('http.response.status_code', response.status);
            if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
            return response;
          } catch (err) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).name });
            throw err;
          } finally {
            span.end();
          }
        },
      ),
    );
    this.uninstall.push(() => setOutboundObserver(null));
    this.uninstall.push(
      addExecutionObserver((info, run) =>
        this.tracer.startActiveSpan(`execute ${info.toolId}`, { kind: SpanKind.INTERNAL, attributes: { 'tos.tool.id': info.toolId, 'tos.execution.id': info.executionId } }, async (span) => {
          try {
            const outcome = await run();
            span.setAttribute('tos.execution.status', outcome.status);
            if (outcome.status === 'error') span.setStatus({ code: SpanStatusCode.ERROR });
            return outcome;
          } catch (err) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
            throw err;
          } finally {
            span.end();
          }
        }),
      ),
    );
  }

  /** The server span of one request, child of the caller's `traceparent` when it sent one. */
  startRequestSpan(method: string, headers: Record<string, unknown>): { span: Span; context: Context } {
    const parent = w3c.extract(ROOT_CONTEXT, headers, headerGetter);
    const span = this.tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, parent);
    return { span, context: trace.setSpan(parent, span) };
  }

  async stop(): Promise<void> {
    for (const undo of this.uninstall.splice(0)) undo();
    await this.provider.shutdown(); // flushes what is still batched
  }
}

