import { Controller, Delete, Param } from '@nestjs/common';
import { CurrentPrincipal, RequireScopes } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { ToolCatalogue } from '../tools/tool-catalogue';
import { cacheScope, ResultCache } from './result-cache';

@Controller()
export class CacheController {
  constructor(
    private readonly cache: ResultCache,
    private readonly registry: ToolCatalogue,
  ) {}

  /** Drops the results this key has cached for the tool (other keys' entries are theirs). */
  @Delete('v1/tools/:tool_id/cache')
  @RequireScopes('tools:invoke')
  async drop(@CurrentPrincipal() principal: Principal, @Param('tool_id') toolId: string) {
    this.registry.get(toolId);
    const dropped = await this.cache.drop(cacheScope(principal.keyId, toolId));
    return { tool_id: toolId, dropped };
  }
}
