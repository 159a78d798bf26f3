import { Body, Controller, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CurrentPrincipal, RequireScopes } from '../../identity/auth.decorators';
import type { Principal } from '../../identity/principal';
import { AppException } from '../../common/errors';
import { IdempotencyService } from '../../idempotency/idempotency.service';
import { ToolCatalogue } from '../../tools/tool-catalogue';
import { setCachedResultHeaders } from '../../common/http-cache';
import { callerGone } from '../../common/caller-gone';
import { applyRateLimit } from '../../limits/rate-limit-headers';
import { invocationAnswer, InvocationService } from './invocation.service';
import { InvokeQuery, parseInvokeRequest } from './invoke-request';

/** POST /v1/tools/{tool_id}/invoke (README "Invoke"). */
@Controller()
export class InvokeController {
  constructor(
    private readonly registry: ToolCatalogue,
    private readonly invocations: InvocationService,
    private readonly idempotency: IdempotencyService,
  ) {}

  @Post(['v1/tools/:tool_id/invoke', 'api/skill/tools/:tool_id/invoke'])
  @HttpCode(200)
  @RequireScopes('tools:invoke')
  async invoke(
    @CurrentPrincipal() principal: Principal,
    @Param('tool_id') toolId: string,
    @Query() query: InvokeQuery,
    @Body() body: unknown,
    @Headers('cache-control') cacheControl: string | undefined,
    @Headers('x-idempotency-key') idempotencyKey: string | undefined,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const invoke = () => this.run(principal, toolId, query, body, cacheControl, request, reply);
    if (idempotencyKey === undefined) return invoke();
    if (!IdempotencyService.validKey(idempotencyKey)) {
      throw AppException.invalidRequest('X-Idempotency-Key must be 1..255 visible ASCII characters', { parameter: 'X-Idempotency-Key' });
    }
    // Retries of one request share the key; its first answer is replayed to them (docs/API.md#idempotent-retries).
    const scope = { keyId: principal.keyId, toolId, idempotencyKey };
    const claim = await this.idempotency.claim(scope, IdempotencyService.requestHash({ body, async: query.async, timeout: query.timeout }));
    if (claim.replay) {
      reply.status(claim.status).header('idempotent-replayed', 'true');
      if (typeof claim.body.status_url === 'string') reply.header('location', claim.body.status_url);
      return claim.body;
    }
    let answer: Awaited<ReturnType<typeof invoke>>;
    try {
      answer = await invoke();
    } catch (err) {
      await this.idempotency.release(scope);
      throw err;
    }
    // The call ran: its answer is the client's even when it cannot be kept for replays (the database went
    // away meanwhile); a 503 here would say nothing was done and invite a second run.
    await this.idempotency.complete(scope, reply.statusCode, answer).catch((err: Error) => request.log.warn(`X-Idempotency-Key answer not kept for replays: ${err.message}`));
    return answer;
  }

  private async run(
    principal: Principal,
    toolId: string,
    query: InvokeQuery,
    body: unknown,
    cacheControl: string | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<Record<string, unknown>> {
    const tool = this.registry.get(toolId);
    const { input, options, answering } = parseInvokeRequest(toolId, body, query, cacheControl);
    const validated = tool.validateInput(input);
    const run = { principal, tool, input: validated, options, requestId: request.id };
    if (options.async) {
      const { execution: queued, window } = await this.invocations.submit(run);
      if (window) applyRateLimit(request, reply, window.limit, window.hit.count, window.hit.resetAt);
      const statusUrl = `/v1/executions/${queued.id}`;
      reply.status(202).header('location', statusUrl);
      return { status: 'queued', execution_id: queued.id, message: `Execution queued; follow it at ${statusUrl} or ${statusUrl}/events`, status_url: statusUrl };
    }
    const outcome = await this.invocations.invokeSync({ ...run, callerGone: () => callerGone(reply), answering });
    const { window } = outcome;
    if (window) applyRateLimit(request, reply, window.limit, window.hit.count, window.hit.resetAt);
    if ('inputRequests' in outcome) {
      return {
        status: 'input_required',
        message: 'The tool asks for input: call again with the same inputs (envelope form), input_responses answering each of input_requests by its key, and request_state',
        input_requests: outcome.inputRequests,
        request_state: outcome.requestState,
      };
    }
    const { cache } = outcome;
    if (cache && outcome.execution.status === 'success') setCachedResultHeaders(reply, cache.etag, cache.storedAt, cache.ttl);
    const answer = invocationAnswer(outcome, reply.elapsedTime);
    reply.status(answer.httpStatus);
    // An upstream's Retry-After, passed on by the tool (ToolError retryAfter), as on any error answer.
    const retryAfter = outcome.execution.error?.retry_after;
    if (retryAfter !== undefined) reply.header('retry-after', retryAfter);
    return answer.body;
  }
}
