import { DynamicModule, Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import { AppConfig } from '../config/app-config';
import { ToolRegistry } from '../tools/tool-registry';
import { ToolsModule } from '../tools/tools.module';
import { MemoryQuotaStore, QuotaStore, RedisQuotaStore } from './quota-store';
import { isInvocation } from './rate-limit.guard';
import { RedisWindowStore } from './redis-window-store';
import { SlidingWindowThrottlerStorage } from './sliding-window.storage';
import { MemoryWindowStore, WINDOW_MS, WindowStore } from './window-store';

const requestOf = (context: { switchToHttp(): { getRequest<T>(): T } }) => context.switchToHttp().getRequest<FastifyRequest>();
const toolIdOf = (request: FastifyRequest) => (request.params as Record<string, string> | undefined)?.tool_id ?? '';

/**
 * Rate limits and quotas (DESIGN §5.13): in memory, or in Redis shared by every API process when
 * REDIS_URL is set. Global, so the auth guard can count unauthenticated attempts per IP.
 */
@Module({})
export class LimitsModule {
  static forRoot(config: AppConfig): DynamicModule {
    const windows: WindowStore = config.REDIS_URL ? new RedisWindowStore(config.REDIS_URL, config.QUEUE_PREFIX) : new MemoryWindowStore();
    const quotas: QuotaStore = config.REDIS_URL ? new RedisQuotaStore(config.REDIS_URL, config.QUEUE_PREFIX) : new MemoryQuotaStore();
    return {
      module: LimitsModule,
      global: true,
      imports: [
        ThrottlerModule.forRootAsync({
          imports: [ToolsModule],
          inject: [ToolRegistry],
          useFactory: (registry: ToolRegistry) => ({
            throttlers: [
              {
                name: 'key',
                ttl: WINDOW_MS,
                limit: (context) => requestOf(context).principal!.limits.requestsPerMinute,
                getTracker: (request) => (request as FastifyRequest).principal!.keyId,
              },
              {
                name: 'tool',
                ttl: WINDOW_MS,
                limit: (context) => registry.get(toolIdOf(requestOf(context))).definition.rate_limit,
                getTracker: (request) => `${(request as FastifyRequest).principal!.keyId}:${toolIdOf(request as FastifyRequest)}`,
                // Enterprise accounts buy their own capacity: their request limit governs, not the shared per-tool one.
                skipIf: (context) => {
                  const request = requestOf(context);
                  return request.principal!.tier === 'enterprise' || !isInvocation(request) || !registry.has(toolIdOf(request));
                },
              },
            ],
            // One window per key (and per key and tool) across every route, not one per route.
            generateKey: (_context, tracker, name) => `${name}:${tracker}`,
            storage: new SlidingWindowThrottlerStorage(windows),
          }),
        }),
      ],
      providers: [
        { provide: WindowStore, useValue: windows },
        { provide: QuotaStore, useValue: quotas },
      ],
      exports: [WindowStore, QuotaStore],
    };
  }
}
