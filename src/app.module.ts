import { DynamicModule, Module, Type } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { BuiltinToolsModule } from '../tools';
import { AllExceptionsFilter } from './common/all-exceptions.filter';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { ExecutionsModule } from './executions/executions.module';
import { HealthModule } from './health/health.module';
import { BootstrapService } from './keys/bootstrap.service';
import { KeysModule } from './keys/keys.module';
import { ObservabilityModule } from './observability/observability.module';
import { OperatorModule } from './operator/operator.module';
import { RedisModule } from './redis/redis.module';
import { loadExtensionModules } from './tools/extension-modules';
import { ToolsModule } from './tools/tools.module';
import { WorkerModule } from './worker.module';

export interface AppModuleOptions {
  config: AppConfig;
  /** Extension modules (their own @Tool providers, guards, storage); picked up without core changes. */
  extensions?: Array<Type | DynamicModule>;
  /** Leave out the built-in tools (tests of the plugin model). */
  withoutBuiltinTools?: boolean;
}

/**
 * The one place the configuration chooses modules: the role's (ApiModule, WorkerModule or both),
 * the metrics endpoint, the operator endpoint, the tools. Every other module is static and reads
 * AppConfig through injection.
 */
function chosenModules(config: AppConfig): Array<Type | DynamicModule | Promise<DynamicModule>> {
  const modules: Array<Type | DynamicModule | Promise<DynamicModule>> = [];
  if (config.runsApi) modules.push(apiRole(config));
  if (config.runsWorker) modules.push(WorkerModule);
  // With DATABASE_URL, operator commands open the database themselves (OperatorModule).
  if (!config.DATABASE_URL) modules.push(OperatorModule);
  return modules;
}

/** The api role's modules, imported only by a process that serves HTTP: a worker never loads the routes' libraries (the MCP SDKs, Swagger). */
async function apiRole(config: AppConfig): Promise<DynamicModule> {
  const { ApiModule } = await import('./api.module');
  if (!config.METRICS_TOKEN) return { module: ApiModule };
  const { MetricsEndpointModule } = await import('./observability/metrics-endpoint.module');
  return { module: ApiModule, imports: [MetricsEndpointModule] };
}

@Module({})
export class AppModule {
  static forRoot({ config, extensions = [], withoutBuiltinTools = false }: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        RedisModule,
        DatabaseModule.forRoot(),
        ToolsModule,
        KeysModule,
        ExecutionsModule,
        HealthModule,
        ObservabilityModule,
        ...chosenModules(config),
        ...(withoutBuiltinTools ? [] : [BuiltinToolsModule]),
        ...extensions,
        ...loadExtensionModules(config.EXTENSION_MODULES),
      ],
      providers: [{ provide: APP_FILTER, useClass: AllExceptionsFilter }, BootstrapService],
    };
  }
}
