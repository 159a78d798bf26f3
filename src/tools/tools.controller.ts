import { Controller, Get, Header, Param, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { AppConfig } from '../config/app-config';
import { CurrentPrincipal, Public, RequireScopes } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { PageQuery } from '../common/pagination';
import { TOOL_CATEGORIES, TOOL_STATUSES } from './sdk';
import { toolDocumentation } from './tool-docs';
import { ToolRegistry } from './tool-registry';

export class ListToolsQuery extends PageQuery {
  @IsOptional() @IsIn(TOOL_CATEGORIES)
  category?: string;

  @IsOptional() @IsIn(TOOL_STATUSES)
  status?: string;

  @IsOptional() @IsString() @MaxLength(200)
  search?: string;
}

/** The catalogue: SPEC §4.1–§4.2. A key restricted to some tools sees only those. */
@Controller()
export class ToolsController {
  constructor(
    private readonly registry: ToolRegistry,
    private readonly config: AppConfig,
  ) {}

  @Get(['v1/tools', 'api/skill/tools'])
  @RequireScopes('tools:read')
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListToolsQuery, @Res({ passthrough: true }) reply: FastifyReply) {
    reply.header('last-modified', this.registry.loadedAt);
    const tools = this.registry.list({ ...query, allowed: principal.toolIds });
    return {
      tools: tools.slice(query.offset, query.offset + query.limit).map((tool) => tool.summary),
      total: tools.length,
      limit: query.limit,
      offset: query.offset,
    };
  }

  @Get('v1/tools/:tool_id')
  @RequireScopes('tools:read')
  get(@Param('tool_id') toolId: string, @Res({ passthrough: true }) reply: FastifyReply) {
    reply.header('last-modified', this.registry.loadedAt);
    return this.registry.get(toolId).detail;
  }

  /** The page each tool's `documentation` URL points at; public like any API reference. */
  @Get('v1/tools/:tool_id/docs')
  @Public()
  @Header('content-type', 'text/markdown; charset=utf-8')
  docs(@Param('tool_id') toolId: string) {
    return toolDocumentation(this.registry.get(toolId).definition, this.config.publicUrl);
  }
}
