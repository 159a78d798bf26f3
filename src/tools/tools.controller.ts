import { ApiPropertyOptional } from '@nestjs/swagger';
import { Controller, Get, Header, Param, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { AppConfig } from '../config/app-config';
import { CurrentPrincipal, Public, RequireScopes } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { PageQuery } from '../common/pagination';
import { TOOL_CATEGORIES, TOOL_STATUSES } from './sdk';
import { toolDocumentation } from './tool-docs';
import { JsonSnapshot, sendSnapshot, snapshotJson } from '../common/http-cache';
import { ToolRegistry } from './tool-registry';

const MAX_LISTINGS = 1_000;

export class ListToolsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: TOOL_CATEGORIES })
  @IsOptional() @IsIn(TOOL_CATEGORIES)
  category?: string;

  @ApiPropertyOptional({ enum: TOOL_STATUSES })
  @IsOptional() @IsIn(TOOL_STATUSES)
  status?: string;

  @ApiPropertyOptional({ maxLength: 200, description: 'Matched against names and descriptions.' })
  @IsOptional() @IsString() @MaxLength(200)
  search?: string;
}

/** The catalogue: GET /v1/tools and /v1/tools/{id}. A key restricted to some tools sees only those. */
@Controller()
export class ToolsController {
  /** The catalogue is fixed after boot: each distinct listing is serialized (and hashed) once. */
  private readonly listings = new Map<string, JsonSnapshot>();
  private readonly details = new Map<string, JsonSnapshot>();

  constructor(
    private readonly registry: ToolRegistry,
    private readonly config: AppConfig,
  ) {}

  @Get(['v1/tools', 'api/skill/tools'])
  @RequireScopes('tools:read')
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListToolsQuery, @Res({ passthrough: true }) reply: FastifyReply) {
    reply.header('last-modified', this.registry.loadedAt);
    const key = JSON.stringify([query.category, query.status, query.search, query.limit, query.offset, principal.toolIds && [...principal.toolIds].sort()]);
    let snapshot = this.listings.get(key);
    if (!snapshot) {
      const tools = this.registry.list({ ...query, allowed: principal.toolIds });
      snapshot = snapshotJson({
        tools: tools.slice(query.offset, query.offset + query.limit).map((tool) => tool.summary),
        total: tools.length,
        limit: query.limit,
        offset: query.offset,
      });
      if (this.listings.size >= MAX_LISTINGS) this.listings.clear(); // searches are open-ended: stay bounded
      this.listings.set(key, snapshot);
    }
    return sendSnapshot(reply, snapshot);
  }

  @Get('v1/tools/:tool_id')
  @RequireScopes('tools:read')
  get(@Param('tool_id') toolId: string, @Res({ passthrough: true }) reply: FastifyReply) {
    reply.header('last-modified', this.registry.loadedAt);
    let snapshot = this.details.get(toolId);
    if (!snapshot) this.details.set(toolId, (snapshot = snapshotJson(this.registry.get(toolId).detail)));
    return sendSnapshot(reply, snapshot);
  }

  /** The page each tool's `documentation` URL points at; public like any API reference. */
  @Get('v1/tools/:tool_id/docs')
  @Public()
  @Header('content-type', 'text/markdown; charset=utf-8')
  docs(@Param('tool_id') toolId: string) {
    return toolDocumentation(this.registry.get(toolId).definition, this.config.publicUrl);
  }
}
