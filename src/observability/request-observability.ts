import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { context, Context, Span, SpanStatusCode } from '@opentelemetry/api';
import type { ServiceMetrics } from './service-metrics';
import type { ServiceTracing } from './tracing';
import { SERVICE_METRICS, SERVICE_TRACING } from './observability-tokens';

declare module 'fastify' {
  interface FastifyRequest {
    traceSpan?: { span: Span; context: Context };
  }
}


/**
 * Per request: rate, errors and duration by route template (metrics), and a server span
 * (tracing). Adds no hook for what is off.
 */
export function installRequestObservability(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  // Null when off (ObservabilityModule).
  const metrics = app.get<symbol, ServiceMetrics | null>(SERVICE_METRICS);
  const tracing = app.get<symbol, ServiceTracing | null>(SERVICE_TRACING);
  if (tracing) {
    fastify.addHook('onRequest', async (request) => {
      request.traceSpan = tracing.startRequestSpan(request.method, request.headers);
    });
    // After the body is read: the handler and everything it awaits run inside the request's span.
    fastify.addHook('preHandler', (request, _reply, done) => (request.traceSpan ? context.with(request.traceSpan.context, done) : done()));
    fastify.addHook('onResponse', async (request, reply) => {
      const span = request.traceSpan?.span;
      if (!span) return;
      const route = request.routeOptions.url;
      if (route) span.updateName(`${request.method} ${route}`).setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    fastify.addHook('onRequestAbort', async (request) => {
      request.traceSpan?.span.setAttribute('tos.client_aborted', true).end();
    });
  }
  if (metrics) {
    fastify.addHook('onResponse', async (request, reply) => {
      const route = request.routeOptions.url ?? '(unmatched)';
      metrics.recordRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000, reply.getHeader('idempotent-replayed') === 'true');
    });
  }
}
