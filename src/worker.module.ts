import { Module } from '@nestjs/common';
import { QueueConsumer } from './executions/engine/queue-consumer';
import { RetentionService } from './executions/engine/retention.service';
import { ExecutionsModule } from './executions/executions.module';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { OrchestrationModule } from './orchestration/orchestration.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { WorkflowDriver } from './workflows/workflow-driver';
import { WorkflowsModule } from './workflows/workflows.module';

/** The worker role (docs/ARCHITECTURE.md#api-and-worker-roles): consume the queue, deliver webhooks, tick schedules and start trigger events, and purge what is past its retention. */
@Module({
  imports: [ExecutionsModule, IdempotencyModule, WebhooksModule, WorkflowsModule, OrchestrationModule],
  providers: [QueueConsumer, RetentionService, WorkflowDriver],
})
export class WorkerModule {}
