import { Body, Controller, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { AppException, ERROR_STATUS } from '../common/errors';
import { ToolRegistry } from '../tools/tool-registry';
import { ExecutionRunner } from './execution-runner';
import { InvokeQuery, parseInvokeRequest } from './invoke-request';

const round = (ms: number) => Math.round(ms * 100) / 100;

/** POST /v1/tools/{tool_id}/invoke (SPEC §4.3). */
@Controller('v1/tools')
export class InvokeController {
  constructor(
    private readonly registry: ToolRegistry,
    private readonly runner: ExecutionRunner,
  ) {}

  @Post(':tool_id/invoke')
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
    if (options.async) {
      throw AppException.invalidRequest('Asynchronous invocation is not enabled on this server yet; invoke synchronously');
    }
    const validated = tool.validateInput(input);
    const { execution, executionMs } = await this.runner.runSync({ principal, tool, input: validated, options, requestId: request.id });

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
