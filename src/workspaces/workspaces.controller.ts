import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiConsumes } from '@nestjs/swagger';
import { AppException } from '../common/errors';
import { PageQuery } from '../common/pagination';
import { CurrentPrincipal, RequireScopes } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { archiveFormat } from './archive-upload';
import { WorkspacesService } from './workspaces.service';

/** The caller's uploaded workspaces: code tools read them with `workspace: "ws_…"`. */
@Controller('v1/workspaces')
export class WorkspacesController {
  constructor(private readonly workspaces: WorkspacesService) {}

  @Post()
  @RequireScopes('workspaces:write')
  @ApiConsumes('application/gzip', 'application/zip', 'application/octet-stream')
  @ApiBody({ description: 'A .tar.gz or .zip of a source tree (at most WORKSPACE_MAX_BYTES).', schema: { type: 'string', format: 'binary' } })
  async create(@CurrentPrincipal() principal: Principal, @Headers('content-type') contentType: string | undefined, @Body() body: unknown) {
    if (!Buffer.isBuffer(body) || body.length === 0) {
      throw new AppException('INVALID_REQUEST', 'Send the archive as the request body with Content-Type application/gzip (a .tar.gz) or application/zip', { details: { parameter: 'body', expected: 'a .tar.gz or .zip archive' } });
    }
    return this.workspaces.create(principal.accountId, body, archiveFormat(contentType, body));
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
