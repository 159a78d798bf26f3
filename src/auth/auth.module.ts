import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Account } from '../keys/account.entity';
import { ApiKey } from '../keys/api-key.entity';
import { KeysModule } from '../keys/keys.module';
import { LimitsModule } from '../limits/limits.module';
import { RateLimitGuard } from '../limits/rate-limit.guard';
import { SessionsModule } from '../sessions/sessions.module';
import { ToolsModule } from '../tools/tools.module';
import { AccessTokenVerifier } from './access-token-verifier';
import { ProtectedResourceController } from './protected-resource.controller';
import { AuthGuard } from './auth.guard';
import { KeyVerifier } from './key-verifier';
import { PrincipalResolver } from './principal-resolver';
import { RedisConnections } from '../redis/redis-connections';
import { MemoryReplayCache, RedisReplayCache, ReplayCache } from './replay-cache';

/**
 * Authentication: who a request is (API keys, OAuth access tokens, console sessions) and whether its route lets it in.
 * Its guards apply to every route of the application; the ApiModule imports it.
 */
@Module({
  imports: [TypeOrmModule.forFeature([ApiKey, Account]), KeysModule, SessionsModule, LimitsModule, ToolsModule],
  controllers: [ProtectedResourceController],
  providers: [
    KeyVerifier,
    AccessTokenVerifier,
    PrincipalResolver,
    { provide: ReplayCache, inject: [RedisConnections], useFactory: (redis: RedisConnections) => (redis.enabled ? new RedisReplayCache(redis) : new MemoryReplayCache()) },
    // In this order: the request window (RateLimitGuard) is the verified key's.
    { provide: APP_GUARD, useClass: AuthGuard },
    { provide: APP_GUARD, useClass: RateLimitGuard },
  ],
  // The WebSocket of live updates (src/executions/live) verifies keys and tokens outside the guards.
  exports: [KeyVerifier, AccessTokenVerifier],
})
export class AuthModule {}
