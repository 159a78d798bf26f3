import { Controller, Get, OnModuleDestroy, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { Public } from '../identity/auth.decorators';
import type Redis from 'ioredis';
import { failFastRedis } from '../common/redis';
import { AppConfig } from '../config/app-config';
import { ExecutionQueue } from '../executions/engine/queue/execution-queue';
import { configuredBackends } from '../observability/backends';

const CHECK_TIMEOUT_MS = 2_000;

/** Probes for orchestrators, public and outside /v1: liveness, and readiness of what requests need. */
@Controller()
@Public()
export class HealthController implements OnModuleDestroy {
  /** Redis as the cache and rate limits see it (they fail open, so only readiness tells it is away). */
  private readonly redis: Redis | null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly queue: ExecutionQueue,
    private readonly config: AppConfig,
  ) {
    this.redis = config.REDIS_URL ? failFastRedis(config.REDIS_URL) : null;
  }

  onModuleDestroy(): void {
    this.redis?.disconnect();
  }

  @Get('healthz')
  live() {
    return { status: 'ok' };
  }

  @Get('readyz')
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const redis = this.redis;
    const [database, queue, shared] = await Promise.all([
      check(() => this.dataSource.query('SELECT 1')),
      check(() => this.queue.ping()),
      redis && check(() => redis.ping()),
    ]);
    const checks = { database, queue, ...(shared && { redis: shared }) };
    const ok = Object.values(checks).every((result) => result === 'ok');
    reply.status(ok ? 200 : 503);
    return { status: ok ? 'ready' : 'unavailable', checks, backends: configuredBackends(this.config) };
  }
}

async function check(probe: () => Promise<unknown>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([probe(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS)))]);
    return 'ok';
  } catch (err) {
    return `failing: ${(err as Error).message}`;
  } finally {
    clearTimeout(timer);
  }
}
