import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKey } from '../keys/api-key.entity';
import { KeysModule } from '../keys/keys.module';
import { LimitsModule } from '../limits/limits.module';
import { RateLimitGuard } from '../limits/rate-limit.guard';
import { SessionsModule } from '../sessions/sessions.module';
import { AuthGuard } from './auth.guard';
import { KeyVerifier } from './key-verifier';
import { PrincipalResolver } from './principal-resolver';
import { RedisConnections } from '../redis/redis-connections';
import { MemoryReplayCache, RedisReplayCache, ReplayCache } from './replay-cache';

/**
 * Authentication: who a request is (API keys, console sessions) and whether its route lets it in.
 * Its guards apply to every route of the application; the ApiModule imports it.
 */
@Module({
  imports: [TypeOrmModule.forFeature([ApiKey]), KeysModule, SessionsModule, LimitsModule],
  providers: [
    KeyVerifier,
    PrincipalResolver,
    { provide: ReplayCache, inject: [RedisConnections], useFactory: (redis: RedisConnections) => (redis.enabled ? new RedisReplayCache(redis) : new MemoryReplayCache()) },
    // In this order: the request window (RateLimitGuard) is the verified key's.
    { provide: APP_GUARD, useClass: AuthGuard },
    { provide: APP_GUARD, useClass: RateLimitGuard },
  ],
  // The WebSocket of live updates (src/executions/live) verifies keys outside the guards.
  exports: [KeyVerifier],
})
export class AuthModule {}
