import { Body, Controller, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ERROR_STATUS } from '../common/errors';
import { ToolRegistry } from '../tools/tool-registry';
import { ExecutionRunner } from './execution-runner';
import { InvokeQuery, parseInvokeRequest } from './invoke-request';

const round = (ms: number) => Math.round(ms * 100) / 100;

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
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
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
    const { execution, executionMs } = await this.runner.runSync({ ...run, callerGone: callerGone(reply) });

    if (execution.status === 'success') {
      const total = reply.elapsedTime;
      return {
        status: 'success',
        execution_id: execution.id,
        result: execution.result,
        timing: { total_ms: round(total), execution_ms: round(executionMs), processing_ms: round(Math.max(0, total - executionMs)) },
      };
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
