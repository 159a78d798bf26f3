import { ApiPropertyOptional } from '@nestjs/swagger';
import { Controller, Get, Header, Optional, Param, Query, Req, Res } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { AppConfig } from '../config/app-config';
import { CurrentPrincipal, Public, RequireScopes } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { PageQuery } from '../common/pagination';
import { TOOL_CATEGORIES, TOOL_STATUSES } from './sdk';
import { toolDocumentation } from './tool-docs';
import { JsonSnapshot, sendSnapshot, snapshotJson } from '../common/http-cache';
import { EncodedJson } from '../common/encoded-json';
import { ValidatedOnce } from '../common/query-validation';
import type { RegisteredTool } from './tool-catalogue';
import { ToolRegistry } from './tool-registry';
import { AccountTools, type AccountTool } from './account-tools';

/** Listings kept encoded (each up to ~130 KB with its compressed forms); searches are open-ended, so the least recently asked go. */
const MAX_LISTINGS = 100;
/** The listing's `view`: each tool's full summary, or SPEC §2.1's compact form (types only). */
const LISTING_VIEWS = { full: (tool: RegisteredTool) => tool.summary, compact: (tool: RegisteredTool) => tool.compact };

@ValidatedOnce()
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

  @ApiPropertyOptional({ enum: Object.keys(LISTING_VIEWS), default: 'full', description: '`compact`: each input and output as its type name only.' })
  @IsOptional() @IsIn(Object.keys(LISTING_VIEWS))
  view: keyof typeof LISTING_VIEWS = 'full';
}

/** The catalogue: GET /v1/tools and /v1/tools/{id}. A key restricted to some tools sees only those. */
@Controller()
export class ToolsController {
  /**
   * The catalogue is fixed after boot (a new one comes with a new process): each distinct listing,
   * per query and per visibility (a key's tool restriction), is serialized, hashed and compressed once.
   */
  private readonly listings = new Map<string, EncodedJson>();
  private readonly details = new Map<string, JsonSnapshot>();

  constructor(
    private readonly registry: ToolRegistry,
    private readonly config: AppConfig,
    @Optional() private readonly accountTools?: AccountTools,
  ) {}

  @Get(['v1/tools', 'api/skill/tools'])
  @RequireScopes('tools:read')
  @RouteConfig({ compress: false }) // the listing carries its own compressed forms
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListToolsQuery, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const own = ((await this.accountTools?.of(principal)) ?? []).filter((tool) => matches(tool, query));
    if (own.length > 0) return this.listingWith(own, query, principal.toolIds);
    reply.header('last-modified', this.registry.loadedAt);
    return this.listing(query, principal.toolIds).send(request, reply);
  }

  /** A listing with the account's own tools (published workflows) after the built-in ones: per account, so never kept. */
  private listingWith(own: AccountTool[], query: ListToolsQuery, allowed: ReadonlySet<string> | null) {
    const view = (tool: AccountTool) => (query.view === 'compact' ? tool.compact : tool.summary);
    const tools = [...this.registry.list({ ...query, allowed }).map(LISTING_VIEWS[query.view]), ...own.map(view)];
    return { tools: tools.slice(query.offset, query.offset + query.limit), total: tools.length, limit: query.limit, offset: query.offset };
  }

  private listing(query: ListToolsQuery, allowed: ReadonlySet<string> | null): EncodedJson {
    const key = JSON.stringify([query.view, query.category, query.status, query.search, query.limit, query.offset, allowed && [...allowed].sort()]);
    let listing = this.listings.get(key);
    if (listing) {
      this.listings.delete(key); // most recently asked last
    } else {
      const tools = this.registry.list({ ...query, allowed });
      listing = new EncodedJson({
        tools: tools.slice(query.offset, query.offset + query.limit).map(LISTING_VIEWS[query.view]),
        total: tools.length,
        limit: query.limit,
        offset: query.offset,
      });
      if (this.listings.size >= MAX_LISTINGS) this.listings.delete(this.listings.keys().next().value as string);
    }
    this.listings.set(key, listing);
    return listing;
  }

  @Get('v1/tools/:tool_id')
  @RequireScopes('tools:read')
  async get(@CurrentPrincipal() principal: Principal, @Param('tool_id') toolId: string, @Res({ passthrough: true }) reply: FastifyReply) {
    if (!this.registry.has(toolId) && this.accountTools) {
      const own = (await this.accountTools.of(principal)).find((tool) => tool.id === toolId);
      if (own) return own.detail;
    }
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

/** An account's own tool in a listing's filters: they are all automation, ready, and searched by name and description. */
function matches(tool: AccountTool, query: ListToolsQuery): boolean {
  if (query.category !== undefined && query.category !== 'automation') return false;
  if (query.status !== undefined && query.status !== 'ready') return false;
  const search = query.search?.toLowerCase();
  return search === undefined || `${tool.id} ${tool.name} ${tool.description}`.toLowerCase().includes(search);
}
