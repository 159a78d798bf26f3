import { Inject, Injectable, Module, OnApplicationBootstrap, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { Server } from 'node:http';
import { AppConfig } from '../config/app-config';
import { ExecutionsModule } from '../executions/executions.module';
import { ExecutionQueue } from '../executions/engine/queue/execution-queue';
import { UpstreamsModule } from '../upstreams/upstreams.module';
import { UpstreamsService } from '../upstreams/upstreams.service';
import { portOf, startMetricsServer } from './metrics-server';
import type { ServiceMetrics } from './service-metrics';
import type { ServiceTracing } from './tracing';
import { SERVICE_METRICS, SERVICE_TRACING } from './observability-tokens';

/** Subscribes metrics and tracing while the application runs, and serves metrics on METRICS_PORT when set. */
@Injectable()
export class ObservabilityLifecycle implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private server?: Server;

  constructor(
    private readonly config: AppConfig,
    @Inject(SERVICE_METRICS) private readonly metrics: ServiceMetrics | null,
    @Inject(SERVICE_TRACING) private readonly tracing: ServiceTracing | null,
  ) {}

  onModuleInit(): void {
    this.metrics?.start();
    this.tracing?.start();
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.metrics && this.config.METRICS_PORT !== undefined) this.server = await startMetricsServer(this.metrics, this.config.HOST, this.config.METRICS_PORT);
  }

  /** The port the metrics server listens on (METRICS_PORT=0 picks a free one). */
  get metricsPort(): number | undefined {
    return this.server && portOf(this.server);
  }

  async onModuleDestroy(): Promise<void> {
    this.metrics?.stop();
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
    await this.tracing?.stop();
  }
}

export const metricsEnabled = (config: AppConfig) => !!config.METRICS_TOKEN || config.METRICS_PORT !== undefined;
export const tracingEnabled = (config: AppConfig) => !!config.OTEL_EXPORTER_OTLP_ENDPOINT;

/**
 * Prometheus metrics (METRICS_TOKEN or METRICS_PORT) and OpenTelemetry traces
 * (OTEL_EXPORTER_OTLP_ENDPOINT); each provider is null when its setting is not there.
 */
@Module({
  imports: [ExecutionsModule, UpstreamsModule],
  providers: [
    {
      provide: SERVICE_METRICS,
      inject: [AppConfig, ExecutionQueue, UpstreamsService],
      useFactory: async (config: AppConfig, queue: ExecutionQueue, upstreams: UpstreamsService) =>
        metricsEnabled(config)
          ? new (await import('./service-metrics')).ServiceMetrics(
              config.ROLE,
              { backend: config.REDIS_URL ? 'bull' : 'in-process', backlog: () => queue.backlog() },
              // Upstreams' health from API processes only: workers would repeat the same rows.
              { health: () => (config.runsApi ? upstreams.health() : null), existing: (ids) => upstreams.existing(ids) },
            )
          : null,
    },
    {
      provide: SERVICE_TRACING,
      inject: [AppConfig],
      useFactory: async (config: AppConfig) => (tracingEnabled(config) ? new (await import('./tracing')).ServiceTracing(config.OTEL_EXPORTER_OTLP_ENDPOINT!, config.ROLE) : null),
    },
    ObservabilityLifecycle,
  ],
  exports: [SERVICE_METRICS, SERVICE_TRACING, ObservabilityLifecycle],
})
export class ObservabilityModule {}
