import { DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { openBroadcast } from '../common/broadcast';
import { AppConfig } from '../config/app-config';
import { ExecutionsModule } from '../executions/executions.module';
import { ToolsModule } from '../tools/tools.module';
import { McpCancellations } from './mcp-cancellations';
import { McpController } from './mcp.controller';
import { McpEndpoint } from './mcp-endpoint';
import { McpLegacyTasks } from './mcp-legacy-tasks';
import { McpLibrary } from './mcp-library';
import { McpModernEndpoint } from './mcp-modern-endpoint';
import { McpTasks } from './mcp-tasks';
import { McpTools } from './mcp-tools';

/** The MCP endpoint over the same registry, limits, cache and runner as REST; API processes only. */
@Module({})
export class McpModule {
  static forRoot(config: AppConfig): DynamicModule {
    if (!config.runsApi) return { module: McpModule };
    return {
      module: McpModule,
      imports: [DiscoveryModule, ToolsModule, ExecutionsModule.forRoot(config)],
      controllers: [McpController],
      providers: [
        McpTools,
        McpTasks,
        McpLegacyTasks,
        McpLibrary,
        McpEndpoint,
        McpModernEndpoint,
        { provide: McpCancellations, useFactory: () => new McpCancellations(openBroadcast(config.REDIS_URL, `${config.QUEUE_PREFIX}:mcp-cancellations`)) },
      ],
    };
  }
}
