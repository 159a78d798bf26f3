import { Module } from '@nestjs/common';
import { ExecutionsModule } from '../executions/executions.module';
import { HealthPort } from './health-port';
import { Readiness } from './readiness';

/** Readiness of what requests and executions need, and HEALTH_PORT's probes (every role). */
@Module({
  imports: [ExecutionsModule],
  providers: [Readiness, HealthPort],
  exports: [Readiness, HealthPort],
})
export class HealthModule {}
