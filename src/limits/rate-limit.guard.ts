import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InjectThrottlerOptions, InjectThrottlerStorage, ThrottlerGuard, type ThrottlerModuleOptions, type ThrottlerStorage } from '@nestjs/throttler';
import type { ThrottlerRequest } from '@nestjs/throttler/dist/throttler.guard.interface';
import type { FastifyRequest } from 'fastify';
import { countedIn } from '../common/rate-limit-headers';
import { rateLimited } from './rate-limit-headers';
import type { WindowRecord } from './sliding-window.storage';

/**
 * The throttler guard with our storage: a rolling 60 s window per API key (the account tier's
 * limit) on every authenticated request. What a tool call pays besides is the AdmissionGate's,
 * decided where the call is made, not here. Runs after AuthGuard, so it knows the key.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
  ) {
    super(options, storage, reflector);
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (!request.principal) return true; // public route: nothing to count against
    return super.canActivate(context);
  }

  protected override async handleRequest({ context, limit, ttl, throttler, getTracker, generateKey }: ThrottlerRequest): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const name = throttler.name ?? 'default';
    const key = generateKey(context, await getTracker(request, context), name);
    const record = (await this.storageService.increment(key, ttl, limit, 0, name)) as WindowRecord;
    countedIn(request, limit, record.totalHits, record.resetAt);
    if (record.isBlocked) throw rateLimited('API key', limit, record.timeToBlockExpire);
    return true;
  }
}
