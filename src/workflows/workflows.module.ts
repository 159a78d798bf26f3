import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ExecutionsModule } from '../executions/executions.module';
import { ToolsModule } from '../tools/tools.module';
import { AccountTools } from '../tools/account-tools';
import { UpstreamsModule } from '../upstreams/upstreams.module';
import { AccountCatalogue } from './account-catalogue';
import { PublishedWorkflows } from './published-workflows';
import { RunGraphs } from './run-graph';
import { RunStore } from './run-store';
import { WorkflowEngine } from './workflow-engine';
import { WorkflowExpressions } from './workflow-expressions';
import { WorkflowRuns } from './workflow-runs';
import { Workflow, WorkflowRun, WorkflowVersion } from './workflow.entity';
import { WorkflowsService } from './workflows.service';

/**
 * Workflows (docs/workflows.md), in every role: documents and their versions, starting runs, the
 * engine that advances them. The controller is the ApiModule's; the WorkflowDriver, which follows
 * steps' events and sweeps runs nobody holds, runs where the queue is consumed (WorkerModule).
 */
@Module({
  imports: [TypeOrmModule.forFeature([Workflow, WorkflowVersion, WorkflowRun]), ToolsModule, ExecutionsModule, UpstreamsModule],
  providers: [
    WorkflowsService, WorkflowRuns, RunGraphs, WorkflowEngine, WorkflowExpressions, RunStore, PublishedWorkflows, AccountCatalogue, { provide: AccountTools, useExisting: AccountCatalogue }],
  exports: [WorkflowsService, WorkflowRuns, RunGraphs, WorkflowEngine, RunStore, PublishedWorkflows, AccountTools],
})
export class WorkflowsModule {}
