import { DynamicModule, Inject, Injectable, Module, OnApplicationBootstrap, OnModuleDestroy, OnModuleInit, Optional, Provider } from '@nestjs/common';
import type { Server } from 'node:http';
import { AppConfig } from '../config/app-config';
import { ExecutionsModule } from '../executions/executions.module';
import { ExecutionQueue } from '../executions/engine/queue/execution-queue';
import { MetricsController } from './metrics.controller';
import { portOf, startMetricsServer } from './metrics-server';
import { ServiceMetrics } from './service-metrics';
import { ServiceTracing } from './tracing';

/** Subscribes metrics and tracing while the application runs, and serves metrics on METRICS_PORT when set. */
@Injectable()
export class ObservabilityLifecycle implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private server?: Server;

  constructor(
    private readonly config: AppConfig,
    @Optional() @Inject(ServiceMetrics) private readonly metrics?: ServiceMetrics,
    @Optional() @Inject(ServiceTracing) private readonly tracing?: ServiceTracing,
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
 * (OTEL_EXPORTER_OTLP_ENDPOINT); with none of them set, nothing at all.
 */
@Module({})
export class ObservabilityModule {
  static forRoot(config: AppConfig): DynamicModule {
    const metricsOn = metricsEnabled(config);
    const tracingOn = tracingEnabled(config);
    if (!metricsOn && !tracingOn) return { module: ObservabilityModule };
    const providers: Provider[] = [ObservabilityLifecycle];
    if (metricsOn) {
      providers.push({
        provide: ServiceMetrics,
        inject: [ExecutionQueue],
        useFactory: (queue: ExecutionQueue) => new ServiceMetrics(config.ROLE, { backend: config.REDIS_URL ? 'bull' : 'in-process', backlog: () => queue.backlog() }),
      });
    }
    if (tracingOn) providers.push({ provide: ServiceTracing, useFactory: () => new ServiceTracing(config.OTEL_EXPORTER_OTLP_ENDPOINT!, config.ROLE) });
    return {
      module: ObservabilityModule,
      imports: metricsOn ? [ExecutionsModule.forRoot(config)] : [],
      controllers: config.METRICS_TOKEN && config.runsApi ? [MetricsController] : [],
      providers,
      exports: providers,
    };
  }
}
