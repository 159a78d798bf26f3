import { BullModule, getQueueToken } from '@nestjs/bull';
import { DynamicModule, Module, Provider } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { AppConfig } from '../config/app-config';
import { SecretsModule } from '../secrets/secrets.module';
import { ToolsModule } from '../tools/tools.module';
import { ExecutionEventBus, InMemoryEventBus } from './events/execution-events';
import { RedisEventBus } from './events/redis-event-bus';
import { Execution } from './execution.entity';
import { ExecutionEventsController } from './execution-events.controller';
import { ExecutionRunner } from './execution-runner';
import { ExecutionWorker } from './execution-worker';
import { ExecutionsController } from './executions.controller';
import { ExecutionsService } from './executions.service';
import { ExecutionsStore } from './executions.store';
import { InvocationService } from './invocation.service';
import { InvokeController } from './invoke.controller';
import { BullExecutionQueue, EXECUTIONS_QUEUE } from './queue/bull.queue';
import { ExecutionJob, ExecutionQueue } from './queue/execution-queue';
import { InProcessQueue } from './queue/in-process.queue';
import { RetentionService } from './retention.service';

/**
 * Executions: in-process queue and events by default; Bull queue and Redis pub/sub when REDIS_URL is set.
 * Global: the limits, the MCP endpoint and extension modules run tools through the same runner.
 */
@Module({})
export class ExecutionsModule {
  static forRoot(config: AppConfig): DynamicModule {
    const distributed = config.REDIS_URL ? redisParts(config.REDIS_URL, config) : null;
    return {
      module: ExecutionsModule,
      global: true,
      imports: [TypeOrmModule.forFeature([Execution]), ToolsModule, SecretsModule, ...(distributed?.imports ?? [])],
      controllers: config.runsApi ? [InvokeController, ExecutionsController, ExecutionEventsController] : [],
      providers: [
        ExecutionsStore,
        ExecutionRunner,
        InvocationService,
        ExecutionsService,
        ExecutionWorker,
        RetentionService,
        ...(distributed?.providers ?? [
          { provide: ExecutionQueue, useFactory: () => new InProcessQueue() },
          { provide: ExecutionEventBus, useFactory: () => new InMemoryEventBus() },
        ]),
      ],
      exports: [ExecutionRunner, InvocationService, ExecutionsService, ExecutionsStore, RetentionService, ExecutionQueue],
    };
  }
}

function redisParts(url: string, config: AppConfig): { imports: DynamicModule[]; providers: Provider[] } {
  const lockDuration = config.QUEUE_LOCK_SECONDS * 1000;
  return {
    imports: [
      BullModule.forRoot({
        url,
        prefix: config.QUEUE_PREFIX,
        // No re-run of a job whose worker stopped renewing its lock: see BullExecutionQueue.
        settings: { lockDuration, lockRenewTime: lockDuration / 2, stalledInterval: lockDuration / 2, maxStalledCount: 0 },
      }),
      BullModule.registerQueue({ name: EXECUTIONS_QUEUE }),
    ],
    providers: [
      { provide: ExecutionQueue, inject: [getQueueToken(EXECUTIONS_QUEUE)], useFactory: (queue: Queue<ExecutionJob>) => new BullExecutionQueue(queue) },
      { provide: ExecutionEventBus, useFactory: () => new RedisEventBus(url, `${config.QUEUE_PREFIX}:execution-events`) },
    ],
  };
}
