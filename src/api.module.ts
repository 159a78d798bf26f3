import { Module } from '@nestjs/common';
import { AuthModule } from './auth/auth.module';
import { CacheController } from './cache/cache.controller';
import { CacheModule } from './cache/cache.module';
import { ConsoleModule } from './console/console.module';
import { ExecutionEventsController } from './executions/request/execution-events.controller';
import { ExecutionsController } from './executions/request/executions.controller';
import { InvokeController } from './executions/request/invoke.controller';
import { UsageController } from './executions/request/usage.controller';
import { ExecutionsModule } from './executions/executions.module';
import { LiveUpdatesModule } from './executions/live/live-updates.module';
import { LiveUpdatesController } from './executions/live/live-updates.controller';
import { HealthController } from './health/health.controller';
import { HealthModule } from './health/health.module';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { KeysController } from './keys/keys.controller';
import { KeysModule } from './keys/keys.module';
import { McpModule } from './mcp/mcp.module';
import { OAuthModule } from './oauth/oauth.module';
import { OpenApiModule } from './openapi/openapi.module';
import { SecretsController } from './secrets/secrets.controller';
import { SecretsModule } from './secrets/secrets.module';
import { ToolsController } from './tools/tools.controller';
import { ToolsModule } from './tools/tools.module';
import { WorkspacesController } from './workspaces/workspaces.controller';
import { WorkspacesModule } from './workspaces/workspaces.module';
import { WebhooksController } from './webhooks/webhooks.controller';
import { WebhooksModule } from './webhooks/webhooks.module';
import { OrchestrationModule } from './orchestration/orchestration.module';
import { SchedulesController } from './orchestration/schedules.controller';
import { TriggersController } from './orchestration/triggers.controller';
import { RunGraphController } from './workflows/run-graph.controller';
import { WorkflowsController } from './workflows/workflows.controller';
import { WorkflowsModule } from './workflows/workflows.module';
import { UpstreamsController } from './upstreams/upstreams.controller';
import { UpstreamsModule } from './upstreams/upstreams.module';

/**
 * The api role (docs/ARCHITECTURE.md#api-and-worker-roles): every HTTP route of the service and its
 * authentication. Feature modules hold what both roles share; their controllers are declared
 * here, so a worker process has no routes at all.
 */
@Module({
  imports: [
    AuthModule,
    ToolsModule,
    KeysModule,
    // The WebSocket of GET /v1/ws is served before routing: app.setup.ts installs it (src/executions/live).
    LiveUpdatesModule,
    SecretsModule,
    WorkspacesModule,
    WebhooksModule,
    OrchestrationModule,
    CacheModule,
    IdempotencyModule,
    ExecutionsModule,
    WorkflowsModule,
    UpstreamsModule,
    HealthModule,
    McpModule,
    OAuthModule,
    OpenApiModule,
    ConsoleModule,
  ],
  // In the order the OpenAPI document lists them.
  controllers: [
    HealthController,
    ToolsController,
    CacheController,
    KeysController,
    InvokeController,
    ExecutionsController,
    ExecutionEventsController,
    LiveUpdatesController,
    UsageController,
    SecretsController,
    WorkspacesController,
    WebhooksController,
    UpstreamsController,
    SchedulesController,
    TriggersController,
    WorkflowsController,
    RunGraphController,
  ],
})
export class ApiModule {}
