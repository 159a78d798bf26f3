import { BullModule, getQueueToken } from '@nestjs/bull';
import { DynamicModule, Module, Provider } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { AppConfig } from '../config/app-config';
import { reconnectPromptly } from '../common/redis';
import { perConfig } from '../config/per-config';
import { CacheModule } from '../cache/cache.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { LimitsModule } from '../limits/limits.module';
import { AdmissionGate, QUOTA_SEED } from '../limits/admission-gate';
import { SecretsModule } from '../secrets/secrets.module';
import { ToolsModule } from '../tools/tools.module';
import { WorkspacesModule } from '../workspaces/workspaces.module';
import { ExecutionEventBus, InMemoryEventBus } from './engine/events/execution-events';
import { RedisEventBus } from './engine/events/redis-event-bus';
import { Execution } from './engine/execution.entity';
import { ExecutionEventsController } from './request/execution-events.controller';
import { ExecutionRunner } from './engine/execution-runner';
import { ExecutionWorker } from './engine/execution-worker';
import { ExecutionReconciler } from './engine/execution-reconciler';
import { ExecutionsController } from './request/executions.controller';
import { ExecutionsService } from './request/executions.service';
import { ExecutionsStore } from './engine/executions.store';
import { InvocationService } from './request/invocation.service';
import { InputRounds } from './request/input-rounds';
import { InvokeController } from './request/invoke.controller';
import { UsageController } from './request/usage.controller';
import { BullExecutionQueue, EXECUTIONS_QUEUE } from './engine/queue/bull.queue';
import { ExecutionJob, ExecutionQueue } from './engine/queue/execution-queue';
import { InProcessQueue } from './engine/queue/in-process.queue';
import { RetentionService } from './engine/retention.service';
import { ExecutionSweeper } from './engine/execution-sweeper';

/**
 * Executions: the request side (request/: invoke and execution endpoints, admission, cache,
 * idempotency) over the engine (engine/: runner, queue, worker, events, store, sweeper). In-process
 * queue and events by default; Bull queue and Redis pub/sub when REDIS_URL is set. One module per
 * configuration, shared by its importers (the app, MCP, metrics).
 */
@Module({})
export class ExecutionsModule {
  static readonly forRoot = perConfig((config: AppConfig): DynamicModule => {
    const distributed = config.REDIS_URL ? redisParts(config.REDIS_URL, config) : null;
    return {
      module: ExecutionsModule,
      imports: [
        TypeOrmModule.forFeature([Execution]),
        ToolsModule,
        SecretsModule,
        WorkspacesModule,
        LimitsModule.forRoot(config),
        CacheModule.forRoot(config),
        IdempotencyModule,
        ...(distributed?.imports ?? []),
      ],
      controllers: config.runsApi ? [InvokeController, ExecutionsController, ExecutionEventsController, UsageController] : [],
      providers: [
        ExecutionsStore,
        { provide: QUOTA_SEED, useExisting: ExecutionsStore },
        AdmissionGate,
        ExecutionRunner,
        InvocationService,
        InputRounds,
        ExecutionsService,
        ExecutionWorker,
        ExecutionReconciler,
        RetentionService,
        ExecutionSweeper,
        ...(distributed?.providers ?? [
          { provide: ExecutionQueue, useFactory: () => new InProcessQueue() },
          { provide: ExecutionEventBus, useFactory: () => new InMemoryEventBus() },
        ]),
      ],
      exports: [InvocationService, ExecutionsService, ExecutionQueue, ExecutionEventBus, InputRounds, AdmissionGate],
    };
  });
}

function redisParts(url: string, config: AppConfig): { imports: DynamicModule[]; providers: Provider[] } {
  const lockDuration = config.QUEUE_LOCK_SECONDS * 1000;
  return {
    imports: [
      BullModule.forRoot({
        url,
        prefix: config.QUEUE_PREFIX,
        redis: { retryStrategy: reconnectPromptly },
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
