import type { AppConfig } from '../config/app-config';

/** What each part of the service runs on in this configuration (/readyz lists it for operators). */
export function configuredBackends(config: AppConfig): Record<string, string> {
  const shared = config.REDIS_URL ? 'redis' : 'memory';
  return {
    database: config.DATABASE_URL ? 'postgresql' : 'pglite',
    queue: config.REDIS_URL ? 'bull' : 'in-process',
    result_cache: shared,
    rate_limits: shared,
    execution_events: shared,
    metrics: [config.METRICS_TOKEN && 'token', config.METRICS_PORT !== undefined && 'port'].filter(Boolean).join('+') || 'off',
    tracing: config.OTEL_EXPORTER_OTLP_ENDPOINT ? 'otlp-http' : 'off',
  };
}
