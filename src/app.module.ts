import { DynamicModule, Module, Type } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { BuiltinToolsModule } from '../tools';
import { AuthGuard } from './auth/auth.guard';
import { AllExceptionsFilter } from './common/all-exceptions.filter';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { ExecutionsModule } from './executions/executions.module';
import { BootstrapService } from './keys/bootstrap.service';
import { KeysModule } from './keys/keys.module';
import { loadExtensionModules } from './tools/extension-modules';
import { HealthController } from './health/health.controller';
import { HealthPort } from './health/health-port';
import { Readiness } from './health/readiness';
import { CacheModule } from './cache/cache.module';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { McpModule } from './mcp/mcp.module';
import { OpenApiModule } from './openapi/openapi.module';
import { ObservabilityModule } from './observability/observability.module';
import { LimitsModule } from './limits/limits.module';
import { RateLimitGuard } from './limits/rate-limit.guard';
import { ToolsModule } from './tools/tools.module';
import { SessionsModule } from './sessions/sessions.module';
import { ConsoleModule } from './console/console.module';
import { OperatorModule } from './operator/operator.module';

export interface AppModuleOptions {
  config: AppConfig;
  /** Extension modules (their own @Tool providers, guards, storage); picked up without core changes. */
  extensions?: Array<Type | DynamicModule>;
  /** Leave out the built-in tools (tests of the plugin model). */
  withoutBuiltinTools?: boolean;
}

@Module({})
export class AppModule {
  static forRoot({ config, extensions = [], withoutBuiltinTools = false }: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(),
        ToolsModule,
        LimitsModule.forRoot(config),
        CacheModule.forRoot(config),
        IdempotencyModule,
        KeysModule,
        SessionsModule,
        ExecutionsModule.forRoot(config),
        McpModule.forRoot(config),
        OpenApiModule.forRoot(config),
        ObservabilityModule.forRoot(config),
        ConsoleModule.forRoot(config),
        OperatorModule.forRoot(config),
        ...(withoutBuiltinTools ? [] : [BuiltinToolsModule]),
        ...extensions,
        ...loadExtensionModules(config.EXTENSION_MODULES),
      ],
      controllers: config.runsApi ? [HealthController] : [],
      providers: [
        // In this order: the rate limits need the key that AuthGuard verified.
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_GUARD, useClass: RateLimitGuard },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        BootstrapService,
        Readiness,
        HealthPort,
      ],
    };
  }
}
