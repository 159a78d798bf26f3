import { DynamicModule, Inject, Injectable, Module, OnApplicationBootstrap, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { Server } from 'node:http';
import { AppConfig } from '../config/app-config';
import { ExecutionQueue } from '../executions/queue/execution-queue';
import { MetricsController } from './metrics.controller';
import { portOf, startMetricsServer } from './metrics-server';
import { ServiceMetrics } from './service-metrics';

/** Subscribes the metrics while the application runs, and serves them on METRICS_PORT when set. */
@Injectable()
class MetricsLifecycle implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private server?: Server;

  constructor(
    @Inject(ServiceMetrics) private readonly metrics: ServiceMetrics,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.metrics.start();
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.METRICS_PORT !== undefined) this.server = await startMetricsServer(this.metrics, this.config.HOST, this.config.METRICS_PORT);
  }

  /** The port the metrics server listens on (METRICS_PORT=0 picks a free one). */
  get metricsPort(): number | undefined {
    return this.server && portOf(this.server);
  }

  async onModuleDestroy(): Promise<void> {
    this.metrics.stop();
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
  }
}

export { MetricsLifecycle };

/** Prometheus metrics (when METRICS_TOKEN or METRICS_PORT is set); nothing at all otherwise. */
@Module({})
export class ObservabilityModule {
  static forRoot(config: AppConfig): DynamicModule {
    if (!config.METRICS_TOKEN && config.METRICS_PORT === undefined) return { module: ObservabilityModule };
    return {
      module: ObservabilityModule,
      controllers: config.METRICS_TOKEN && config.runsApi ? [MetricsController] : [],
      providers: [
        {
          provide: ServiceMetrics,
          inject: [ExecutionQueue],
          useFactory: (queue: ExecutionQueue) => new ServiceMetrics(config.ROLE, { backend: config.REDIS_URL ? 'bull' : 'in-process', backlog: () => queue.backlog() }),
        },
        MetricsLifecycle,
      ],
      exports: [ServiceMetrics, MetricsLifecycle],
    };
  }
}
