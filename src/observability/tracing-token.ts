/**
 * The token of the ServiceTracing provider (null when tracing is off): a symbol rather than the
 * class, so a process without OTEL_EXPORTER_OTLP_ENDPOINT never loads the OpenTelemetry SDK
 * (tracing.ts), a large part of start-up (bench/README.md, start-up).
 */
export const SERVICE_TRACING = Symbol('ServiceTracing');
