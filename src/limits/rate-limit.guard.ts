import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InjectThrottlerOptions, InjectThrottlerStorage, ThrottlerGuard, type ThrottlerModuleOptions, type ThrottlerStorage } from '@nestjs/throttler';
import type { ThrottlerRequest } from '@nestjs/throttler/dist/throttler.guard.interface';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ExecutionsStore } from '../executions/executions.store';
import { QuotaStore } from './quota-store';
import { applyRateLimit, rateLimited } from './rate-limit-headers';
import type { WindowRecord } from './sliding-window.storage';

/**
 * The throttler guard with our storage: a rolling 60 s window per API key (the account tier's
 * limit) and, for invocations, one per key and tool (the tool's rate_limit); then the account's
 * monthly call quota. Runs after AuthGuard, so it knows the key.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly quotas: QuotaStore,
    private readonly executions: ExecutionsStore,
  ) {
    super(options, storage, reflector);
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (!request.principal) return true; // public route: nothing to count against
    await super.canActivate(context);
    if (isInvocation(request)) await this.consumeQuota(request, context.switchToHttp().getResponse<FastifyReply>());
    return true;
  }

  protected override async handleRequest({ context, limit, ttl, throttler, getTracker, generateKey }: ThrottlerRequest): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const name = throttler.name ?? 'default';
    const key = generateKey(context, await getTracker(request, context), name);
    const record = (await this.storageService.increment(key, ttl, limit, 0, name)) as WindowRecord;
    applyRateLimit(request, reply, limit, record.totalHits, record.resetAt);
    if (record.isBlocked) throw rateLimited(reply, name === 'tool' ? `tool ${request.params && (request.params as Record<string, string>).tool_id}` : 'API key', limit, record.timeToBlockExpire);
    return true;
  }

  private async consumeQuota(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const { accountId, limits } = request.principal!;
    if (limits.monthlyCalls === null) return;
    const now = new Date();
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    const key = `${accountId}:${monthStart.toISOString().slice(0, 7)}`;
    const use = await this.quotas.consume(key, limits.monthlyCalls, nextMonth.getTime() - now.getTime() + 86_400_000, () =>
      this.executions.countSince(accountId, monthStart),
    );
    if (!use.allowed) throw rateLimited(reply, 'monthly call quota', limits.monthlyCalls, Math.ceil((nextMonth.getTime() - now.getTime()) / 1000), 'month');
  }
}

export function isInvocation(request: FastifyRequest): boolean {
  return request.method === 'POST' && request.routeOptions.url?.endsWith('/invoke') === true;
}
