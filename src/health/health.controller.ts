import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Public } from '../identity/auth.decorators';
import { Readiness } from './readiness';

/** Probes for orchestrators, public and outside /v1: liveness, and readiness of what requests need. */
@Controller()
@Public()
export class HealthController {
  constructor(private readonly readiness: Readiness) {}

  @Get('healthz')
  live() {
    return { status: 'ok' };
  }

  @Get('readyz')
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const { ok, body } = await this.readiness.check();
    reply.status(ok ? 200 : 503);
    return body;
  }
}
