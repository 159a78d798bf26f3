import { Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';
import { ObservabilityModule } from './observability.module';

/** GET /metrics on the main port: an API process with METRICS_TOKEN set (the root module decides). */
@Module({ imports: [ObservabilityModule], controllers: [MetricsController] })
export class MetricsEndpointModule {}
