import { Injectable } from '@nestjs/common';
import type { Principal } from '../identity/principal';
import { AccountTools, type AccountTool } from '../tools/account-tools';
import type { RegisteredTool } from '../tools/tool-catalogue';
import type { InvokeQuery } from '../executions/request/invoke-request';
import { accountToolOf } from '../upstreams/upstream-tool';
import { UpstreamsService } from '../upstreams/upstreams.service';
import { PublishedWorkflows } from './published-workflows';
import type { RunAnswer } from './workflow-runs';

/**
 * The tools an account adds to its catalogue: its published workflows (docs/workflows.md#publishing)
 * and its upstream servers' tools (docs/upstreams.md), the one AccountTools the catalogue and MCP read.
 */
@Injectable()
export class AccountCatalogue extends AccountTools {
  constructor(
    private readonly published: PublishedWorkflows,
    private readonly upstreams: UpstreamsService,
  ) {
    super();
  }

  async of(principal: Principal): Promise<AccountTool[]> {
    const [workflows, upstreamTools] = await Promise.all([this.published.of(principal), this.upstreams.toolsOf(principal)]);
    return [...workflows, ...upstreamTools.map(accountToolOf)];
  }

  invoke(principal: Principal, toolId: string, body: unknown, query: InvokeQuery, requestId: string): Promise<RunAnswer | undefined> {
    return this.published.invoke(principal, toolId, body, query, requestId);
  }

  runnable(principal: Principal, toolId: string): Promise<RegisteredTool | undefined> {
    return this.upstreams.toolById(principal, toolId);
  }
}
