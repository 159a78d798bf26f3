import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { Public } from '../auth/auth.decorators';
import { ExecutionQueue } from '../executions/queue/execution-queue';

const CHECK_TIMEOUT_MS = 2_000;

/** Probes for orchestrators, public and outside /v1: liveness, and readiness of what requests need. */
@Controller()
@Public()
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly queue: ExecutionQueue,
  ) {}

  @Get('healthz')
  live() {
    return { status: 'ok' };
  }

  @Get('readyz')
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const [database, queue] = await Promise.all([
      check(() => this.dataSource.query('SELECT 1')),
      check(() => this.queue.ping()),
    ]);
    const ok = database === 'ok' && queue === 'ok';
    reply.status(ok ? 200 : 503);
    return { status: ok ? 'ready' : 'unavailable', checks: { database, queue } };
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
