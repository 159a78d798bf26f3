import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InjectThrottlerOptions, InjectThrottlerStorage, ThrottlerGuard, type ThrottlerModuleOptions, type ThrottlerStorage } from '@nestjs/throttler';
import type { ThrottlerRequest } from '@nestjs/throttler/dist/throttler.guard.interface';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ToolRegistry } from '../tools/tool-registry';
import { InvocationLimits } from './invocation-limits';
import { applyRateLimit, rateLimited } from './rate-limit-headers';
import type { WindowRecord } from './sliding-window.storage';

/**
 * The throttler guard with our storage: a rolling 60 s window per API key (the account tier's
 * limit) on every authenticated request; a REST invocation also pays InvocationLimits (its tool's
 * window, the monthly quota). Runs after AuthGuard, so it knows the key.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly invocations: InvocationLimits,
    private readonly registry: ToolRegistry,
  ) {
    super(options, storage, reflector);
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (!request.principal) return true; // public route: nothing to count against
    await super.canActivate(context);
    const toolId = invokedToolId(request);
    if (toolId !== null && this.registry.has(toolId)) {
      const window = await this.invocations.admit(request.principal, this.registry.get(toolId).definition);
      if (window) applyRateLimit(request, context.switchToHttp().getResponse<FastifyReply>(), window.limit, window.hit.count, window.hit.resetAt);
    }
    return true;
  }

  protected override async handleRequest({ context, limit, ttl, throttler, getTracker, generateKey }: ThrottlerRequest): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const name = throttler.name ?? 'default';
    const key = generateKey(context, await getTracker(request, context), name);
    const record = (await this.storageService.increment(key, ttl, limit, 0, name)) as WindowRecord;
    applyRateLimit(request, reply, limit, record.totalHits, record.resetAt);
    if (record.isBlocked) throw rateLimited('API key', limit, record.timeToBlockExpire);
    return true;
  }
}

/** The tool a REST invocation names; null for every other route. */
function invokedToolId(request: FastifyRequest): string | null {
  if (request.method !== 'POST' || request.routeOptions.url?.endsWith('/invoke') !== true) return null;
  return (request.params as Record<string, string>).tool_id;
}
