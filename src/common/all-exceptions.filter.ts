import { ArgumentsHost, Catch, ExceptionFilter, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { toErrorResponse } from './errors';
import { DatabaseOutages, dependencyUnavailable, unreachableDependency } from './outages';

/**
 * Renders every error as the envelope of docs/API.md#envelope — Fastify's own too, which Nest routes here
 * through its error handler. Bugs are logged with the request id, never shown. A database or
 * Redis that cannot be reached is an outage, not a bug: 503 (retryable, Retry-After), and one
 * log line per change of state instead of a stack per request.
 */
@Catch()
@Injectable()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(private readonly outages: DatabaseOutages) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const dependency = unreachableDependency(exception);
    if (dependency) this.outages.report(dependency, exception);
    const { status, body, unexpected } = toErrorResponse(dependency ? dependencyUnavailable(dependency) : exception);
    if (unexpected) request.log.error({ err: exception }, 'unexpected error');
    if (reply.sent) return;
    // One retry time, however the error was raised: Retry-After is retry_after.
    if (body.retry_after !== undefined) reply.header('retry-after', body.retry_after);
    if (body.code === 'RATE_LIMITED') reply.header('x-ratelimit-retry-after', body.retry_after);
    void reply.status(status).header('content-type', 'application/json; charset=utf-8').send({ error: body });
  }
}
