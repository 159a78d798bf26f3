import { Controller, Get, Headers, Inject, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { Public } from '../identity/auth.decorators';
import { AppException } from '../common/errors';
import { AppConfig } from '../config/app-config';
import { SERVICE_METRICS } from './observability-tokens';
import type { ServiceMetrics } from './service-metrics';

/** GET /metrics on the main port, for a scraper holding METRICS_TOKEN (API keys do not open it). */
@Controller()
@Public()
export class MetricsController {
  private readonly expected: Buffer;

  constructor(
    @Inject(SERVICE_METRICS) private readonly metrics: ServiceMetrics,
    config: AppConfig,
  ) {
    this.expected = Buffer.from(`Bearer ${config.METRICS_TOKEN}`);
  }

  @Get('metrics')
  @ApiOperation({ summary: 'Prometheus metrics of this process', description: 'Needs `Authorization: Bearer <METRICS_TOKEN>` (not an API key). Present when METRICS_TOKEN is set.' })
  @ApiOkResponse({ description: 'Prometheus text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } })
  async scrape(@Headers('authorization') authorization: string | undefined, @Res({ passthrough: true }) reply: FastifyReply) {
    const given = Buffer.from(authorization ?? '');
    if (given.length !== this.expected.length || !timingSafeEqual(given, this.expected)) {
      reply.header('www-authenticate', 'Bearer');
      throw new AppException('UNAUTHORIZED', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>');
    }
    reply.header('content-type', this.metrics.registry.contentType);
    return this.metrics.registry.metrics();
  }
}
