import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { AppException } from '../common/errors';
import { CurrentPrincipal, RequireScopes } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { SECRET_NAME } from '../secrets/secret-name';
import type { UpstreamAuth } from './upstream.entity';
import { MAX_UPSTREAMS_PER_ACCOUNT, UpstreamsService } from './upstreams.service';

/** Lower-case, so `<name>.<tool>` reads as one id; `workflow` is the published workflows' prefix (docs/workflows.md#publishing). */
const UPSTREAM_NAME = /^(?!workflow$)[a-z][a-z0-9-]{0,31}$/;

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
  @IsString() @Matches(UPSTREAM_NAME, { message: 'name must be 1-32 of a-z, 0-9 and -, starting with a letter, and not "workflow"' })
  name: string;

  @ApiProperty({ enum: ['streamable-http'] })
  @IsIn(['streamable-http'])
  transport: 'streamable-http';

  @ApiProperty({ format: 'uri', maxLength: 2048, description: 'http(s); checked against the egress policy here and at every call.' })
  @IsString() @MaxLength(2048)
  url: string;

  @ApiProperty({ description: '`{ "bearer_secret_name": "<secret>" }` (one of the account’s secrets, read at each call) or `{ "none": true }`.' })
  @IsObject()
  auth: Record<string, unknown>;

  @ApiPropertyOptional({ type: UpstreamToolFilterDto })
  @IsOptional() @IsObject()
  tools?: UpstreamToolFilterDto;

  @ApiPropertyOptional({ minimum: 1, maximum: 300, default: 30, description: 'Seconds a call may take.' })
  @IsOptional() @IsInt() @Min(1) @Max(300)
  timeout?: number;
}

export class UpdateUpstreamDto {
  @ApiPropertyOptional({ description: 'false takes every tool of the upstream out of the catalogue.' })
  @IsOptional() @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({ description: 'Per upstream tool name: false switches the tool off, true on again.', additionalProperties: { type: 'boolean' } })
  @IsOptional() @IsObject()
  tools_enabled?: Record<string, boolean>;
}

/** `auth` as one of its two forms, else the 400 naming what is wrong. */
function authOf(raw: Record<string, unknown>): UpstreamAuth {
  const keys = Object.keys(raw);
  if (keys.length === 1 && raw.none === true) return { none: true };
  if (keys.length === 1 && typeof raw.bearer_secret_name === 'string' && SECRET_NAME.test(raw.bearer_secret_name)) return { bearer_secret_name: raw.bearer_secret_name };
  throw AppException.invalidRequest('auth must be { "bearer_secret_name": "<secret name>" } or { "none": true }', { parameter: 'auth' });
}

function filterOf(raw: UpstreamToolFilterDto | undefined): UpstreamToolFilterDto | undefined {
  if (!raw) return undefined;
  const names = (list: unknown, member: string) => {
    if (list === undefined) return undefined;
    if (!Array.isArray(list) || list.length > 500 || !list.every((name) => typeof name === 'string' && name.length > 0 && name.length <= 128)) {
      throw AppException.invalidRequest(`tools.${member} must be a list of at most 500 tool names`, { parameter: `tools.${member}` });
    }
    return list as string[];
  };
  const include = names(raw.include, 'include');
  const exclude = names(raw.exclude, 'exclude');
  return { ...(include && { include }), ...(exclude && { exclude }) };
}

/** The account's upstream MCP servers (docs/upstreams.md). */
@Controller('v1/upstreams')
@RequireScopes('upstreams:manage')
export class UpstreamsController {
  constructor(private readonly upstreams: UpstreamsService) {}

  /** 201 with the upstream and what its discovery found (or the error it met, in `status.last_error`). */
  @Post()
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateUpstreamDto) {
    return this.upstreams.create(principal, { name: body.name, url: body.url, auth: authOf(body.auth), tools: filterOf(body.tools), timeout: body.timeout });
  }

  @Get()
  async list(@CurrentPrincipal() principal: Principal) {
    return { upstreams: await this.upstreams.list(principal), max_upstreams: MAX_UPSTREAMS_PER_ACCOUNT };
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
