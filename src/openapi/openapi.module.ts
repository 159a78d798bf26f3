import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ToolsModule } from '../tools/tools.module';
import { DocsController } from './docs.controller';
import { OpenApiController } from './openapi.controller';
import { OpenApiDocument } from './openapi-document';

/** The OpenAPI document and the reference page; part of the ApiModule. */
@Module({
  imports: [ToolsModule, DiscoveryModule],
  controllers: [OpenApiController, DocsController],
  providers: [OpenApiDocument],
})
export class OpenApiModule {}
