import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ExecutionsModule } from '../executions/executions.module';
import { LiveUpdatesModule } from '../executions/live/live-updates.module';
import { openBroadcast } from '../redis/broadcast';
import { RedisConnections } from '../redis/redis-connections';
import { ToolsModule } from '../tools/tools.module';
import { WorkflowsModule } from '../workflows/workflows.module';
import { McpCancellations } from './mcp-cancellations';
import { McpController } from './mcp.controller';
import { McpServerCardController } from './mcp-server-card.controller';
import { McpEndpoint } from './mcp-endpoint';
import { McpLegacyTasks } from './mcp-legacy-tasks';
import { McpLibrary } from './mcp-library';
import { McpModernEndpoint } from './mcp-modern-endpoint';
import { McpTasks } from './mcp-tasks';
import { McpTools } from './mcp-tools';

/** The MCP endpoint over the same registry, limits, cache and runner as REST; part of the ApiModule. */
@Module({
  imports: [DiscoveryModule, ToolsModule, ExecutionsModule, LiveUpdatesModule, WorkflowsModule],
  controllers: [McpController, McpServerCardController],
  providers: [
    McpTools,
    McpTasks,
    McpLegacyTasks,
    McpLibrary,
    McpEndpoint,
    McpModernEndpoint,
    { provide: McpCancellations, inject: [RedisConnections], useFactory: (redis: RedisConnections) => new McpCancellations(openBroadcast(redis, 'mcp-cancellations')) },
  ],
})
export class McpModule {}
