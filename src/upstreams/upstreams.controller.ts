import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsInt, IsISO8601, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { AppException } from '../common/errors';
import { PageQuery } from '../common/pagination';
import { CurrentPrincipal, RequireScopes } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { MAX_OPERATIONS } from './openapi-document';
import { UPSTREAM_AUDIT_ACTIONS, type UpstreamAuditAction } from './upstream-audit-event.entity';
import { auditFilterOf, authOf, filterOf, UPSTREAM_NAME, UPSTREAM_NAME_RULE } from './upstream-fields';
import { MAX_UPSTREAMS_PER_ACCOUNT, UpstreamsService } from './upstreams.service';

/** Kept with the controller: the worker reads upstream-fields.ts (operator commands) and loads no Swagger. */
export class UpstreamToolFilterDto {
  @ApiPropertyOptional({ type: [String], maxItems: 500 })
  @IsOptional() @IsArray() @ArrayMaxSize(500) @IsString({ each: true }) @MaxLength(128, { each: true })
  include?: string[];

  @ApiPropertyOptional({ type: [String], maxItems: 500 })
  @IsOptional() @IsArray() @ArrayMaxSize(500) @IsString({ each: true }) @MaxLength(128, { each: true })
  exclude?: string[];
}

export class CreateUpstreamDto {
  @ApiProperty({ pattern: UPSTREAM_NAME.source, description: 'Its tools are `<name>.<tool>`.' })
  @IsString() @Matches(UPSTREAM_NAME, { message: UPSTREAM_NAME_RULE })
  name: string;

  @ApiPropertyOptional({ enum: ['mcp', 'openapi'], default: 'mcp', description: '`openapi`: operations of an OpenAPI 3.0/3.1 document as tools (docs/upstreams.md#openapi-operations).' })
  @IsOptional() @IsIn(['mcp', 'openapi'])
  type?: 'mcp' | 'openapi';

  @ApiPropertyOptional({ enum: ['streamable-http', 'stdio'], description: 'An MCP upstream’s transport (required for `type: "mcp"`). `stdio` is the operator’s alone (403 here): see docs/upstreams.md#local-stdio-servers.' })
  @ValidateIf((body: CreateUpstreamDto) => body.type !== 'openapi') @IsIn(['streamable-http', 'stdio'])
  transport?: 'streamable-http' | 'stdio';

  @ApiPropertyOptional({ format: 'uri', maxLength: 2048, description: 'An MCP upstream’s endpoint (required for `type: "mcp"`), http(s); checked against the egress policy here and at every call.' })
  @ValidateIf((body: CreateUpstreamDto) => body.type !== 'openapi') @IsString() @MaxLength(2048)
  url?: string;

  @ApiPropertyOptional({ format: 'uri', maxLength: 2048, description: 'OpenAPI: where the document is fetched (through the egress policy, at most 2 MiB, no redirects). One of `spec_url` and `spec`.' })
  @IsOptional() @IsString() @MaxLength(2048)
  spec_url?: string;

  @ApiPropertyOptional({ oneOf: [{ type: 'object' }, { type: 'string' }], description: 'OpenAPI: the document itself, as JSON or as YAML text. Only references within it (`#/...`) are followed.' })
  @Allow()
  spec?: unknown;

  @ApiPropertyOptional({ format: 'uri', maxLength: 2048, description: 'OpenAPI: the API’s base URL; an operation’s path is appended to its path. Checked against the egress policy here and at every call.' })
  @ValidateIf((body: CreateUpstreamDto) => body.type === 'openapi') @IsString() @MaxLength(2048)
  base_url?: string;

  @ApiPropertyOptional({ type: [String], maxItems: MAX_OPERATIONS, description: 'OpenAPI: the operations to offer, by operationId or as "METHOD /path"; each becomes the tool `<name>.<operationId>`.' })
  @ValidateIf((body: CreateUpstreamDto) => body.type === 'openapi') @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_OPERATIONS) @IsString({ each: true }) @MaxLength(300, { each: true })
  operations?: string[];

  @ApiProperty({ description: '`{ "bearer_secret_name": "<secret>" }` (one of the account’s secrets, read at each call), `{ "api_key_header": "X-Api-Key", "api_key_secret_name": "<secret>" }` (OpenAPI only) or `{ "none": true }`.' })
  @IsObject()
  auth: Record<string, unknown>;

  @ApiPropertyOptional({ type: UpstreamToolFilterDto })
  @IsOptional() @IsObject()
  tools?: UpstreamToolFilterDto;

  @ApiPropertyOptional({ minimum: 1, maximum: 300, default: 30, description: 'Seconds a call may take.' })
  @IsOptional() @IsInt() @Min(1) @Max(300)
  timeout?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 3600, default: 0, description: 'Seconds a read-only tool\u2019s successful result is reused for the same key and input; 0 never.' })
  @IsOptional() @IsInt() @Min(0) @Max(3600)
  cache_ttl?: number;
}

export class UpdateUpstreamDto {
  @ApiPropertyOptional({ description: 'false takes every tool of the upstream out of the catalogue.' })
  @IsOptional() @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({ description: 'Per upstream tool name: false switches the tool off, true on again.', additionalProperties: { type: 'boolean' } })
  @IsOptional() @IsObject()
  tools_enabled?: Record<string, boolean>;

  @ApiPropertyOptional({ minimum: 0, maximum: 3600, default: 0, description: 'Seconds a read-only tool\u2019s successful result is reused for the same key and input; 0 never.' })
  @IsOptional() @IsInt() @Min(0) @Max(3600)
  cache_ttl?: number;
}

/** Filters of the audit log (docs/upstreams.md#audit-log), paged as every list (docs/API.md#paging). */
export class UpstreamAuditQuery extends PageQuery {
  @ApiPropertyOptional({ enum: UPSTREAM_AUDIT_ACTIONS })
  @IsOptional() @IsIn(UPSTREAM_AUDIT_ACTIONS)
  action?: UpstreamAuditAction;

  @ApiPropertyOptional({ format: 'date-time', description: 'Events at or after this time.' })
  @IsOptional() @IsISO8601({ strict: true })
  since?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Events at or before this time.' })
  @IsOptional() @IsISO8601({ strict: true })
  until?: string;
}

/** Exactly one of `spec_url` and `spec`. */
function specSourceOf(body: CreateUpstreamDto): { spec_url: string } | { spec: unknown } {
  if ((body.spec_url === undefined) === (body.spec === undefined)) throw AppException.invalidRequest('give exactly one of spec_url and spec', { parameter: body.spec_url === undefined ? 'spec_url' : 'spec' });
  if (body.spec !== undefined && (body.spec === null || (typeof body.spec !== 'object' && typeof body.spec !== 'string') || Array.isArray(body.spec))) {
    throw AppException.invalidRequest('spec must be the OpenAPI document as a JSON object or as YAML text', { parameter: 'spec' });
  }
  return body.spec_url !== undefined ? { spec_url: body.spec_url } : { spec: body.spec };
}

/** The account's upstream MCP servers (docs/upstreams.md). */
@Controller('v1/upstreams')
@RequireScopes('upstreams:manage')
export class UpstreamsController {
  constructor(private readonly upstreams: UpstreamsService) {}

  /** 201 with the upstream and what its discovery found (or the error it met, in `status.last_error`). */
  @Post()
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateUpstreamDto) {
    if (body.type !== 'openapi' && body.transport === 'stdio') {
      throw new AppException('FORBIDDEN', 'Stdio upstreams run commands on the service’s machine: only the operator registers them (tos upstreams add --stdio, docs/upstreams.md#local-stdio-servers)', { details: { parameter: 'transport' } });
    }
    if (body.type === 'openapi') {
      return this.upstreams.createOpenApi(principal, { name: body.name, base_url: body.base_url!, ...specSourceOf(body), operations: body.operations!, auth: authOf(body.auth, true), timeout: body.timeout, cache_ttl: body.cache_ttl });
    }
    return this.upstreams.create(principal, { name: body.name, url: body.url!, auth: authOf(body.auth, false), tools: filterOf(body.tools), timeout: body.timeout, cache_ttl: body.cache_ttl });
  }

  @Get()
  async list(@CurrentPrincipal() principal: Principal) {
    return { upstreams: await this.upstreams.list(principal), max_upstreams: MAX_UPSTREAMS_PER_ACCOUNT };
  }

  /** The audit log of the account's upstreams: who registered, changed and called what, newest first. */
  @Get('audit')
  async auditLog(@CurrentPrincipal() principal: Principal, @Query() query: UpstreamAuditQuery) {
    return { ...(await this.upstreams.auditLog(principal, auditFilterOf(query), query.limit, query.offset)), limit: query.limit, offset: query.offset };
  }

  /** One upstream's audit log, kept after it is deleted. */
  @Get(':upstream_id/audit')
  async upstreamAuditLog(@CurrentPrincipal() principal: Principal, @Param('upstream_id') id: string, @Query() query: UpstreamAuditQuery) {
    return { ...(await this.upstreams.auditLog(principal, auditFilterOf(query, id), query.limit, query.offset)), limit: query.limit, offset: query.offset };
  }

  @Get(':upstream_id')
  get(@CurrentPrincipal() principal: Principal, @Param('upstream_id') id: string) {
    return this.upstreams.get(principal, id);
  }

  @Patch(':upstream_id')
  update(@CurrentPrincipal() principal: Principal, @Param('upstream_id') id: string, @Body() body: UpdateUpstreamDto) {
    const toggles = body.tools_enabled ?? {};
    const wrong = Object.entries(toggles).find(([, on]) => typeof on !== 'boolean');
    if (wrong) throw AppException.invalidRequest(`tools_enabled.${wrong[0]} must be true or false`, { parameter: `tools_enabled.${wrong[0]}` });
    return this.upstreams.update(principal, id, body);
  }

  @Post(':upstream_id/refresh')
  @HttpCode(200)
  refresh(@CurrentPrincipal() principal: Principal, @Param('upstream_id') id: string) {
    return this.upstreams.refresh(principal, id);
  }

  @Delete(':upstream_id')
  @HttpCode(204)
  async delete(@CurrentPrincipal() principal: Principal, @Param('upstream_id') id: string): Promise<void> {
    await this.upstreams.delete(principal, id);
  }
}
