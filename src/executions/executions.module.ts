import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import Bull from 'bull';
import { AppConfig } from '../config/app-config';
import { CacheModule } from '../cache/cache.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { LimitsModule } from '../limits/limits.module';
import { AdmissionGate, QUOTA_SEED } from '../limits/admission-gate';
import { reconnectPromptly, RedisConnections } from '../redis/redis-connections';
import { SecretsModule } from '../secrets/secrets.module';
import { ToolsModule } from '../tools/tools.module';
import { WorkspacesModule } from '../workspaces/workspaces.module';
import { ExecutionEventBus, InMemoryEventBus } from './engine/events/execution-events';
import { RedisEventBus } from './engine/events/redis-event-bus';
import { Execution } from './engine/execution.entity';
import { ExecutionLifecycle } from './engine/execution-lifecycle';
import { ExecutionReconciler } from './engine/execution-reconciler';
import { ExecutionRunner } from './engine/execution-runner';
import { ExecutionSweeper } from './engine/execution-sweeper';
import { ExecutionsStore } from './engine/executions.store';
import { BullExecutionQueue, EXECUTIONS_QUEUE } from './engine/queue/bull.queue';
import { ExecutionJob, ExecutionQueue } from './engine/queue/execution-queue';
import { InProcessQueue } from './engine/queue/in-process.queue';
import { ExecutionsService } from './request/executions.service';
import { InputRounds } from './request/input-rounds';
import { InvocationService } from './request/invocation.service';

/** Bull's three connections, opened (and closed) by the Redis module; `client` runs commands, the others block or subscribe. */
function bullConnection(redis: RedisConnections) {
  return (type: 'client' | 'subscriber' | 'bclient') =>
    redis.open(`bull-${type}`, { enableReadyCheck: false, retryStrategy: reconnectPromptly, ...(type !== 'client' && { maxRetriesPerRequest: null }) });
}

/** The queue: Bull on Redis when REDIS_URL is set, else in this process. */
function executionQueue(config: AppConfig, redis: RedisConnections): ExecutionQueue {
  if (!redis.enabled) return new InProcessQueue();
  const lockDuration = config.QUEUE_LOCK_SECONDS * 1000;
  const queue = new Bull<ExecutionJob>(EXECUTIONS_QUEUE, {
    prefix: config.QUEUE_PREFIX,
    createClient: bullConnection(redis),
    // No re-run of a job whose worker stopped renewing its lock: see BullExecutionQueue.
    settings: { lockDuration, lockRenewTime: lockDuration / 2, stalledInterval: lockDuration / 2, maxStalledCount: 0 },
  });
  return new BullExecutionQueue(queue);
}

/**
 * Executions, in every role: the request side (request/: invocation, admission, input rounds)
 * over the engine (engine/: runner, queue, events, store, sweeper, reconciler). In-process queue
 * and events by default; Bull queue and Redis pub/sub when REDIS_URL is set. The HTTP
 * controllers are the ApiModule's, consuming the queue the WorkerModule's.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Execution]), ToolsModule, SecretsModule, WorkspacesModule, LimitsModule, CacheModule, IdempotencyModule],
  providers: [
    ExecutionsStore,
    { provide: QUOTA_SEED, useExisting: ExecutionsStore },
    AdmissionGate,
    ExecutionRunner,
    InvocationService,
    InputRounds,
    ExecutionsService,
    ExecutionLifecycle,
    ExecutionReconciler,
    ExecutionSweeper,
    { provide: ExecutionQueue, inject: [AppConfig, RedisConnections], useFactory: executionQueue },
    {
      provide: ExecutionEventBus,
      inject: [RedisConnections],
      useFactory: (redis: RedisConnections) => (redis.enabled ? new RedisEventBus(redis) : new InMemoryEventBus()),
    },
  ],
  exports: [InvocationService, ExecutionsService, ExecutionQueue, ExecutionEventBus, InputRounds, AdmissionGate, ExecutionsStore, ExecutionRunner, ExecutionReconciler],
})
export class ExecutionsModule {}
