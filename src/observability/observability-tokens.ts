/**
 * The tokens of the ServiceMetrics and ServiceTracing providers (each null when its setting is
 * not there): symbols rather than the classes, so a process without metrics or tracing never loads
 * prom-client (service-metrics.ts) or the OpenTelemetry SDK (tracing.ts), a large part of
 * start-up (bench/README.md, start-up and memory).
 */
export const SERVICE_METRICS = Symbol('ServiceMetrics');
export const SERVICE_TRACING = Symbol('ServiceTracing');
