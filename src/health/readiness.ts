import { Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { ExecutionQueue } from '../executions/engine/queue/execution-queue';
import { configuredBackends } from '../observability/backends';
import { RedisConnections } from '../redis/redis-connections';

/** Longest wait for one dependency's answer: a probe must answer before the orchestrator's own timeout. */
const CHECK_TIMEOUT_MS = 2_000;

export interface ReadinessReport {
  ok: boolean;
  body: { status: 'ready' | 'unavailable'; checks: Record<string, string>; backends: ReturnType<typeof configuredBackends> };
}

/** Whether what requests and executions need answers: the database, the queue and (when set) Redis. */
@Injectable()
export class Readiness {
  /** Redis as the cache and rate limits see it (they fail open, so only readiness tells it is away). */
  private readonly redis: Redis | null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly queue: ExecutionQueue,
    private readonly config: AppConfig,
    connections: RedisConnections,
  ) {
    this.redis = connections.enabled ? connections.commands : null;
  }

  async check(): Promise<ReadinessReport> {
    const redis = this.redis;
    const [database, queue, shared] = await Promise.all([
      check(() => this.dataSource.query('SELECT 1')),
      check(() => this.queue.ping()),
      redis && check(() => redis.ping()),
    ]);
    const checks = { database, queue, ...(shared && { redis: shared }) };
    const ok = Object.values(checks).every((result) => result === 'ok');
    return { ok, body: { status: ok ? 'ready' : 'unavailable', checks, backends: configuredBackends(this.config) } };
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
