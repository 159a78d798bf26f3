import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { toErrorResponse } from './errors';

/**
 * Renders every error as the SPEC §7 envelope — Fastify's own too, which Nest routes here
 * through its error handler. Bugs are logged with the request id, never shown.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const { status, body, unexpected } = toErrorResponse(exception);
    if (unexpected) request.log.error({ err: exception }, 'unexpected error');
    if (reply.sent) return;
    // One retry time, however the error was raised: Retry-After is retry_after.
    if (body.retry_after !== undefined) reply.header('retry-after', body.retry_after);
    if (body.code === 'RATE_LIMITED') reply.header('x-ratelimit-retry-after', body.retry_after);
    void reply.status(status).header('content-type', 'application/json; charset=utf-8').send({ error: body });
  }
}
