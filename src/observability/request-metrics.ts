import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ServiceMetrics } from './service-metrics';

/** Rate, errors and duration per route template; adds nothing when metrics are off. */
export function installRequestMetrics(app: NestFastifyApplication): void {
  let metrics: ServiceMetrics;
  try {
    metrics = app.get(ServiceMetrics, { strict: false });
  } catch {
    return;
  }
  app.getHttpAdapter().getInstance().addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? '(unmatched)';
    metrics.recordRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000, reply.getHeader('idempotent-replayed') === 'true');
  });
}
