import { DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AppConfig } from '../config/app-config';
import { ToolsModule } from '../tools/tools.module';
import { DocsController } from './docs.controller';
import { OpenApiController } from './openapi.controller';
import { OpenApiDocument } from './openapi-document';

/** The OpenAPI document and the reference page; API processes only. */
@Module({})
export class OpenApiModule {
  static forRoot(config: AppConfig): DynamicModule {
    if (!config.runsApi) return { module: OpenApiModule };
    return {
      module: OpenApiModule,
      imports: [ToolsModule, DiscoveryModule],
      controllers: [OpenApiController, DocsController],
      providers: [OpenApiDocument],
      exports: [OpenApiDocument],
    };
  }
}
