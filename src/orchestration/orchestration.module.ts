import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ExecutionsModule } from '../executions/executions.module';
import { ApiKey } from '../keys/api-key.entity';
import { LimitsModule } from '../limits/limits.module';
import { SecretsModule } from '../secrets/secrets.module';
import { ToolsModule } from '../tools/tools.module';
import { WorkflowsModule } from '../workflows/workflows.module';
import { KeyPrincipals } from './key-principals';
import { OrchestrationLoop } from './orchestration-loop';
import { Schedule, ScheduleRun } from './schedule.entity';
import { ScheduleTicker } from './schedule-ticker';
import { SchedulesService } from './schedules.service';
import { TargetLauncher } from './target-launcher';
import { Trigger, TriggerEvent } from './trigger.entity';
import { TriggerLaunches } from './trigger-launches';
import { TriggersService } from './triggers.service';
import { WorkflowTargets } from './workflow-targets';

/**
 * Schedules and triggers (docs/orchestration.md): what starts a target without a caller. The
 * OrchestrationLoop drives the ScheduleTicker and TriggerLaunches in processes of the worker role
 * (the embedded process holds both); the ApiModule declares the SchedulesController and TriggersController. A workflow
 * target is a run of the WorkflowsModule's WorkflowRuns (WorkflowTargets).
 */
@Module({
  imports: [TypeOrmModule.forFeature([Schedule, ScheduleRun, Trigger, TriggerEvent, ApiKey]), ExecutionsModule, ToolsModule, SecretsModule, LimitsModule, WorkflowsModule],
  providers: [TargetLauncher, WorkflowTargets, KeyPrincipals, SchedulesService, ScheduleTicker, TriggersService, TriggerLaunches, OrchestrationLoop],
  exports: [SchedulesService, TriggersService, ScheduleTicker, OrchestrationLoop],
})
export class OrchestrationModule {}
