import { Body, Controller, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { AppException, ERROR_STATUS } from '../common/errors';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { ToolRegistry } from '../tools/tool-registry';
import { etagOf, setCachedResultHeaders } from '../cache/http-cache';
import { cacheScope, ResultCache, resultCacheKey } from '../cache/result-cache';
import { ExecutionRunner } from './execution-runner';
import { InvokeQuery, parseInvokeRequest } from './invoke-request';

const round = (ms: number) => Math.round(ms * 100) / 100;

/** SPEC §2.2: total is request time, execution is tool time, processing is the rest. */
function timing(reply: FastifyReply, executionMs: number) {
  const total = reply.elapsedTime;
  return { total_ms: round(total), execution_ms: round(executionMs), processing_ms: round(Math.max(0, total - executionMs)) };
}

/** Aborts when the client disconnects before its answer is written: its execution is cancelled. */
function callerGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** POST /v1/tools/{tool_id}/invoke (SPEC §4.3). */
@Controller()
export class InvokeController {
  constructor(
    private readonly registry: ToolRegistry,
    private readonly runner: ExecutionRunner,
    private readonly cache: ResultCache,
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
    // Retries of one request share the key; its first answer is replayed to them (DESIGN §5.12).
    const scope = { keyId: principal.keyId, toolId, idempotencyKey };
    const claim = await this.idempotency.claim(scope, IdempotencyService.requestHash({ body, async: query.async, timeout: query.timeout }));
    if (claim.replay) {
      reply.status(claim.status).header('idempotent-replayed', 'true');
      if (typeof claim.body.status_url === 'string') reply.header('location', claim.body.status_url);
      return claim.body;
    }
    try {
      const answer = await invoke();
      await this.idempotency.complete(scope, reply.statusCode, answer);
      return answer;
    } catch (err) {
      await this.idempotency.release(scope);
      throw err;
    }
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
    const { input, options } = parseInvokeRequest(toolId, body, query, cacheControl);
    const validated = tool.validateInput(input);
    const run = { principal, tool, input: validated, options, requestId: request.id };
    if (options.async) {
      const queued = await this.runner.submit(run);
      const statusUrl = `/v1/executions/${queued.id}`;
      reply.status(202).header('location', statusUrl);
      return { status: 'queued', execution_id: queued.id, message: `Execution queued; follow it at ${statusUrl} or ${statusUrl}/events`, status_url: statusUrl };
    }
    const { definition } = tool;
    const cacheKey = definition.cacheable ? resultCacheKey(principal.keyId, toolId, definition.version, validated) : null;
    if (cacheKey && options.cache) {
      const hit = await this.cache.get(cacheKey);
      if (hit) {
        const ttl = Math.max(0, Math.ceil((hit.expires_at - Date.now()) / 1000));
        setCachedResultHeaders(reply, hit.etag, hit.stored_at, ttl);
        return { status: 'success', execution_id: hit.execution_id, result: hit.result, timing: timing(reply, 0), cache: { hit: true, ttl } };
      }
    }
    const { execution, executionMs } = await this.runner.runSync({ ...run, callerGone: callerGone(reply) });

    if (execution.status === 'success') {
      const body = { status: 'success', execution_id: execution.id, result: execution.result, timing: timing(reply, executionMs) };
      if (!cacheKey) return body;
      const storedAt = Date.now();
      const etag = etagOf(JSON.stringify(execution.result));
      void this.cache.set(cacheKey, cacheScope(principal.keyId, toolId), { execution_id: execution.id, result: execution.result!, etag, stored_at: storedAt, expires_at: storedAt + definition.cache_ttl * 1000 });
      setCachedResultHeaders(reply, etag, storedAt, definition.cache_ttl);
      return { ...body, cache: { hit: false, ttl: definition.cache_ttl } };
    }
    if (execution.status === 'cancelled') {
      reply.status(409);
      return { status: 'cancelled', execution_id: execution.id, error: { code: 'CONFLICT', message: 'Execution was cancelled', retryable: false } };
    }
    const error = execution.error!;
    reply.status(ERROR_STATUS[error.code] ?? 500);
    return { status: 'error', execution_id: execution.id, error };
  }
}
