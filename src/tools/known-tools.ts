import { Injectable } from '@nestjs/common';
import { RuntimeTools } from './runtime-tools';
import { ToolCatalogue, type RegisteredTool } from './tool-catalogue';

/**
 * The tools an account may name by id: a built-in one, or one it added at run time (an upstream's,
 * docs/upstreams.md). The one check behind a key's, a webhook's and a schedule's or trigger's tool ids.
 */
@Injectable()
export class KnownTools {
  constructor(
    private readonly catalogue: ToolCatalogue,
    private readonly runtimeTools: RuntimeTools,
  ) {}

  /** The tool `toolId` names for the account, or undefined. */
  async find(accountId: string, toolId: string): Promise<RegisteredTool | undefined> {
    return this.catalogue.has(toolId) ? this.catalogue.get(toolId) : this.runtimeTools.find(accountId, toolId);
  }

  /** The first of `toolIds` naming no tool of the account, if any. */
  async firstUnknown(accountId: string, toolIds: readonly string[]): Promise<string | undefined> {
    for (const toolId of toolIds) if (!(await this.find(accountId, toolId))) return toolId;
    return undefined;
  }
}
