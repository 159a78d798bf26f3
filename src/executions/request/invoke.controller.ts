import { Body, Controller, Headers, HttpCode, Optional, Param, Post, Query, Req, Res, UseInterceptors } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CurrentPrincipal, RequireScopes } from '../../identity/auth.decorators';
import type { Principal } from '../../identity/principal';
import { ToolCatalogue, type RegisteredTool } from '../../tools/tool-catalogue';
import { AccountTools } from '../../tools/account-tools';
import { callerGone } from '../../common/caller-gone';
import { countedIn } from '../../common/rate-limit-headers';
import type { ToolWindow } from '../../limits/admission-gate';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { invocationAnswer, InvocationService } from './invocation.service';
import { InvokeAnswer } from './invoke-answer';
import { InvokeQuery, parseInvokeRequest } from './invoke-request';
import { ResultCacheInterceptor } from './result-cache.interceptor';

/** POST /v1/tools/{tool_id}/invoke (README "Invoke"); replays and cache validators are its interceptors'. */
@Controller()
export class InvokeController {
  constructor(
    private readonly registry: ToolCatalogue,
    private readonly invocations: InvocationService,
    @Optional() private readonly accountTools?: AccountTools,
  ) {}

  @Post(['v1/tools/:tool_id/invoke', 'api/skill/tools/:tool_id/invoke'])
  @HttpCode(200)
  @RequireScopes('tools:invoke')
  @UseInterceptors(IdempotencyInterceptor, ResultCacheInterceptor)
  async invoke(
    @CurrentPrincipal() principal: Principal,
    @Param('tool_id') toolId: string,
    @Query() query: InvokeQuery,
    @Body() body: unknown,
    @Headers('cache-control') cacheControl: string | undefined,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<InvokeAnswer> {
    let runnable: RegisteredTool | undefined;
    if (!this.registry.has(toolId) && this.accountTools) {
      // The account's own tool (a published workflow, docs/workflows.md#publishing): a run of it.
      const own = await this.accountTools.invoke(principal, toolId, body, query, request.id);
      if (own) {
        reply.status(own.status);
        if (own.status === 202) reply.header('location', own.body.status_url as string);
        return new InvokeAnswer(own.body);
      }
      // An upstream server's tool (docs/upstreams.md) runs below as a built-in one does.
      runnable = await this.accountTools.runnable(principal, toolId);
    }
    const tool = runnable ?? this.registry.get(toolId);
    const { input, options, answering } = parseInvokeRequest(toolId, body, query, cacheControl);
    const validated = tool.validateInput(input);
    const run = { principal, tool, input: validated, options, requestId: request.id };
    if (options.async) {
      const { execution: queued, window } = await this.invocations.submit(run);
      countedInToolWindow(request, window);
      const statusUrl = `/v1/executions/${queued.id}`;
      reply.status(202).header('location', statusUrl);
      return new InvokeAnswer({ status: 'queued', execution_id: queued.id, message: `Execution queued; follow it at ${statusUrl} or ${statusUrl}/events`, status_url: statusUrl });
    }
    const outcome = await this.invocations.invokeSync({ ...run, callerGone: () => callerGone(reply), answering });
    countedInToolWindow(request, outcome.window);
    if ('inputRequests' in outcome) {
      return new InvokeAnswer({
        status: 'input_required',
        message: 'The tool asks for input: call again with the same inputs (envelope form), input_responses answering each of input_requests by its key, and request_state',
        input_requests: outcome.inputRequests,
        request_state: outcome.requestState,
      });
    }
    const answer = invocationAnswer(outcome, reply.elapsedTime);
    reply.status(answer.httpStatus);
    // An upstream's Retry-After, passed on by the tool (ToolError retryAfter), as on any error answer.
    const retryAfter = outcome.execution.error?.retry_after;
    if (retryAfter !== undefined) reply.header('retry-after', retryAfter);
    return new InvokeAnswer(answer.body, outcome.cache);
  }
}

/** The tool's own window (none for enterprise accounts) shows in X-RateLimit-* when it is the tighter. */
function countedInToolWindow(request: FastifyRequest, window: ToolWindow | null): void {
  if (window) countedIn(request, window.limit, window.hit.count, window.hit.resetAt);
}
