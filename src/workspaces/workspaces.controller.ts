import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiConsumes } from '@nestjs/swagger';
import { AppException } from '../common/errors';
import { PageQuery } from '../common/pagination';
import { CurrentPrincipal, RequireScopes } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { refInput } from '../tools/sdk';
import { archiveFormat } from './archive-upload';
import { WorkspacesService } from './workspaces.service';

const REF = new RegExp(refInput().pattern as string);

function cloneRequest(body: unknown): { git_url: string; ref?: string } {
  const { git_url: url, ref } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (typeof url !== 'string' || url.length === 0 || url.length > 2048) {
    throw new AppException('INVALID_REQUEST', 'Send an archive (Content-Type application/gzip or application/zip), or JSON with git_url (an http(s) URL of at most 2048 characters)', { details: { parameter: 'git_url', expected: 'an http(s) URL' } });
  }
  if (ref !== undefined && (typeof ref !== 'string' || ref.length > 255 || !REF.test(ref))) {
    throw new AppException('INVALID_INPUT', 'ref must be a branch or tag name', { details: { parameter: 'ref', expected: 'a branch or tag name', received: String(ref).slice(0, 80) } });
  }
  return { git_url: url, ref };
}

/** The caller's uploaded workspaces: code tools read them with `workspace: "ws_…"`. */
@Controller('v1/workspaces')
export class WorkspacesController {
  constructor(private readonly workspaces: WorkspacesService) {}

  @Post()
  @RequireScopes('workspaces:write')
  @ApiConsumes('application/gzip', 'application/zip', 'application/octet-stream', 'application/json')
  @ApiBody({
    description: 'A .tar.gz or .zip of a source tree (at most WORKSPACE_MAX_BYTES), or JSON { git_url, ref? } for a shallow clone.',
    schema: { oneOf: [{ type: 'string', format: 'binary' }, { type: 'object', required: ['git_url'], properties: { git_url: { type: 'string', maxLength: 2048 }, ref: { type: 'string', maxLength: 255 } } }] },
  })
  async create(@CurrentPrincipal() principal: Principal, @Headers('content-type') contentType: string | undefined, @Body() body: unknown) {
    if (Buffer.isBuffer(body) && body.length > 0) return this.workspaces.create(principal, body, archiveFormat(contentType, body));
    const clone = cloneRequest(body);
    return this.workspaces.clone(principal, clone.git_url, clone.ref);
  }

  @Get()
  @RequireScopes('workspaces:read')
  async list(@CurrentPrincipal() principal: Principal, @Query() page: PageQuery) {
    const { workspaces, total } = await this.workspaces.list(principal.accountId, page.limit, page.offset);
    return { workspaces, total, limit: page.limit, offset: page.offset };
  }

  @Get(':id')
  @RequireScopes('workspaces:read')
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.workspaces.get(principal.accountId, id);
  }

  @Delete(':id')
  @RequireScopes('workspaces:write')
  @HttpCode(204)
  async delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.workspaces.delete(principal.accountId, id);
  }
}
