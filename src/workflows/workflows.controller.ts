import { Body, Controller, Delete, Get, HttpCode, Param, ParseIntPipe, Post, Put, Query, Req, Res, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiConsumes } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PageQuery } from '../common/pagination';
import { CurrentPrincipal, RequireScopes } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { executionSummary } from '../executions/request/execution-views';
import { IdempotencyInterceptor } from '../executions/request/idempotency.interceptor';
import { InvokeAnswer } from '../executions/request/invoke-answer';
import type { InvokeQuery } from '../executions/request/invoke-request';
import { workflowSummary, workflowVersionView, workflowView } from './workflow-views';
import { WorkflowRuns } from './workflow-runs';
import { WorkflowsService } from './workflows.service';

const DOCUMENT_BODY = {
  description: 'The workflow document (docs/workflows.md#the-document): a JSON object, `{ "document": "<YAML text>" }`, or YAML text with Content-Type application/yaml.',
  schema: { type: 'object', additionalProperties: true },
};

/** Workflows (docs/workflows.md): stored, versioned documents, and their runs. */
@Controller()
export class WorkflowsController {
  constructor(
    private readonly workflows: WorkflowsService,
    private readonly runs: WorkflowRuns,
  ) {}

  @Post('v1/workflows')
  @HttpCode(201)
  @RequireScopes('workflows:manage')
  @ApiConsumes('application/json', 'application/yaml')
  @ApiBody(DOCUMENT_BODY)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: unknown) {
    return workflowView(await this.workflows.create(principal.accountId, body));
  }

  @Get('v1/workflows')
  @RequireScopes('tools:read')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: PageQuery) {
    const { workflows, total } = await this.workflows.page(principal.accountId, query.limit, query.offset);
    return { workflows: workflows.map(workflowSummary), total, limit: query.limit, offset: query.offset };
  }

  @Get('v1/workflows/:workflow_id')
  @RequireScopes('tools:read')
  async get(@CurrentPrincipal() principal: Principal, @Param('workflow_id') id: string) {
    return workflowView(await this.workflows.get(principal.accountId, id));
  }

  /** A new version; runs already started keep theirs. */
  @Put('v1/workflows/:workflow_id')
  @RequireScopes('workflows:manage')
  @ApiConsumes('application/json', 'application/yaml')
  @ApiBody(DOCUMENT_BODY)
  async update(@CurrentPrincipal() principal: Principal, @Param('workflow_id') id: string, @Body() body: unknown) {
    return workflowView(await this.workflows.update(principal.accountId, id, body));
  }

  @Delete('v1/workflows/:workflow_id')
  @RequireScopes('workflows:manage')
  async remove(@CurrentPrincipal() principal: Principal, @Param('workflow_id') id: string) {
    await this.workflows.remove(principal.accountId, id);
    return { status: 'deleted', workflow_id: id };
  }

  @Get('v1/workflows/:workflow_id/versions')
  @RequireScopes('tools:read')
  async versions(@CurrentPrincipal() principal: Principal, @Param('workflow_id') id: string) {
    const versions = await this.workflows.versionsOf(principal.accountId, id);
    return { versions: versions.map(workflowVersionView) };
  }

  @Get('v1/workflows/:workflow_id/versions/:version')
  @RequireScopes('tools:read')
  async version(@CurrentPrincipal() principal: Principal, @Param('workflow_id') id: string, @Param('version', ParseIntPipe) version: number) {
    return workflowVersionView(await this.workflows.version(principal.accountId, id, version));
  }

  /**
   * Starts a run (the body is an invoke's: flat inputs, or `{ inputs, options: { async, timeout } }`).
   * Async: 202 with the run's execution. Sync: waits up to `timeout` seconds; a run still going
   * then (or waiting for input) is a 202 like an async one.
   */
  @Post('v1/workflows/:workflow_id/runs')
  @HttpCode(200)
  @RequireScopes('tools:invoke')
  @UseInterceptors(IdempotencyInterceptor)
  async run(
    @CurrentPrincipal() principal: Principal,
    @Param('workflow_id') id: string,
    @Query() query: InvokeQuery,
    @Body() body: unknown,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<InvokeAnswer> {
    const answer = await this.runs.request(principal, await this.workflows.get(principal.accountId, id), body, query, request.id);
    reply.status(answer.status);
    if (answer.status === 202) reply.header('location', answer.body.status_url as string);
    return new InvokeAnswer(answer.body);
  }

  @Get('v1/workflows/:workflow_id/runs')
  @RequireScopes('executions:read')
  async listRuns(@CurrentPrincipal() principal: Principal, @Param('workflow_id') id: string, @Query() query: PageQuery) {
    const { runs, total } = await this.runs.page(principal.accountId, id, query.limit, query.offset);
    return { runs: runs.map(executionSummary), total, limit: query.limit, offset: query.offset };
  }
}
