import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ToolsModule } from '../tools/tools.module';
import { Execution } from './execution.entity';
import { ExecutionRunner } from './execution-runner';
import { ExecutionsController } from './executions.controller';
import { ExecutionsService } from './executions.service';
import { ExecutionsStore } from './executions.store';
import { InvokeController } from './invoke.controller';

@Module({
  imports: [TypeOrmModule.forFeature([Execution]), ToolsModule],
  controllers: [InvokeController, ExecutionsController],
  providers: [ExecutionsStore, ExecutionRunner, ExecutionsService],
  exports: [ExecutionRunner, ExecutionsService],
})
export class ExecutionsModule {}
