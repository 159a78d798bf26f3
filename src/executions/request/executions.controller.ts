import { TOOL_ID } from '../../identity/tool-id';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { IsIn, IsObject, IsOptional, IsString, Matches } from 'class-validator';
import { CurrentPrincipal, RequireScopes } from '../../identity/auth.decorators';
import type { Principal } from '../../identity/principal';
import { AppException } from '../../common/errors';
import { EXECUTION_ID_PATTERN } from '../../common/ids';
import { PageQuery } from '../../common/pagination';
import { EXECUTION_STATUSES, ExecutionStatus, type Execution } from '../engine/execution.entity';
import { executionSummary, executionView } from './execution-views';
import { ExecutionsService } from './executions.service';

export class ListExecutionsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: EXECUTION_STATUSES })
  @IsOptional() @IsIn(EXECUTION_STATUSES)
  status?: ExecutionStatus;

  @ApiPropertyOptional({ pattern: '^(workflow\\.)?[a-z0-9-]{1,64}$', description: 'A tool id, or `workflow.<name>` for the runs of a workflow.' })
  @IsOptional() @IsString() @Matches(TOOL_ID, { message: 'tool_id must be a tool id' })
  tool_id?: string;

  /** Cursor paging (docs/API.md#paging): empty starts the walk. */
  @ApiPropertyOptional({ description: 'Cursor paging: empty starts the walk, then each page’s pagination.after.' })
  @IsOptional() @IsString() @Matches(/^[A-Za-z0-9_-]{0,64}$/, { message: 'after must be a cursor returned by a previous page' })
  after?: string;
}

export class AnswerInputDto {
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'An answer per question key of `input_requests` (an elicitation: `{ action, content? }`).' })
  @IsObject()
  responses: Record<string, unknown>;
}

@Controller()
export class ExecutionsController {
  constructor(private readonly executions: ExecutionsService) {}

  @Get('v1/executions')
  @RequireScopes('executions:read')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListExecutionsQuery) {
    const filter = { status: query.status, tool_id: query.tool_id };
    const { executions, total, next } =
      query.after !== undefined
        ? await this.executions.pageAfter(principal, filter, decodeCursor(query.after), query.limit)
        : await this.executions.page(principal, filter, query.limit, query.offset);
    // One shape for both ways of paging: clients expect the page as `executions` (offsets) or
    // `items` (cursors), so both are given. An offset page's cursor continues it by cursor.
    const summaries = executions.map(executionSummary);
    return {
      executions: summaries,
      items: summaries,
      total,
      limit: query.limit,
      offset: query.after !== undefined ? null : query.offset,
      pagination: { after: next && encodeCursor(next), has_more: next !== null },
    };
  }

  @Get(['v1/executions/:execution_id', 'api/skill/status/:execution_id'])
  @RequireScopes('executions:read')
  async get(@CurrentPrincipal() principal: Principal, @Param('execution_id') id: string, @Res({ passthrough: true }) reply: FastifyReply) {
    const execution = await this.executions.get(principal, id);
    reply.header('last-modified', lastChange(execution).toUTCString());
    return executionView(execution);
  }

  /** Answers the questions an async execution in `input_required` waits on; once all are answered it runs again. */
  @Post('v1/executions/:execution_id/input')
  @HttpCode(202)
  @RequireScopes('tools:invoke')
  async answer(@CurrentPrincipal() principal: Principal, @Param('execution_id') id: string, @Body() body: AnswerInputDto) {
    return executionView(await this.executions.answer(principal, id, body.responses));
  }

  @Delete('v1/executions/:execution_id')
  @RequireScopes('executions:cancel')
  async cancel(@CurrentPrincipal() principal: Principal, @Param('execution_id') id: string) {
    const execution = await this.executions.cancel(principal, id);
    return { status: 'cancelled', execution_id: execution.id, message: `Execution ${execution.id} cancelled` };
  }
}

/** When the row last moved: its end, else the later of its (latest) start and its wait for a worker or an answer. */
function lastChange({ completed_at, started_at, waiting_since, created_at }: Execution): Date {
  if (completed_at) return completed_at;
  const moves = [started_at, waiting_since].filter((at): at is Date => at !== null);
  return moves.length > 0 ? new Date(Math.max(...moves.map((at) => at.getTime()))) : created_at;
}

/** Cursors are opaque to clients: the last id seen, base64url-encoded. */
function encodeCursor(id: string): string {
  return Buffer.from(id).toString('base64url');
}

function decodeCursor(cursor: string): string | null {
  if (cursor === '') return null;
  const id = Buffer.from(cursor, 'base64url').toString();
  if (!EXECUTION_ID_PATTERN.test(id)) throw AppException.invalidRequest('after must be a cursor returned by a previous page', { parameter: 'after' });
  return id;
}
