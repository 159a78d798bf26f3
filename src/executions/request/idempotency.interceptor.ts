import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { AppException } from '../../common/errors';
import { IdempotencyService } from '../../idempotency/idempotency.service';
import { InvokeAnswer } from './invoke-answer';
import type { InvokeQuery } from './invoke-request';

/**
 * X-Idempotency-Key on the invoke route (docs/API.md#idempotent-retries): retries of one request
 * share the key, and its first answer is replayed to them. A claim is released when the call
 * fails before answering, so a retry runs it.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(private readonly idempotency: IdempotencyService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const idempotencyKey = request.headers['x-idempotency-key'] as string | undefined;
    if (idempotencyKey === undefined) return next.handle();
    return from(this.once(request, http.getResponse<FastifyReply>(), idempotencyKey, next));
  }

  private async once(request: FastifyRequest, reply: FastifyReply, idempotencyKey: string, next: CallHandler): Promise<unknown> {
    if (!IdempotencyService.validKey(idempotencyKey)) {
      throw AppException.invalidRequest('X-Idempotency-Key must be 1..255 visible ASCII characters', { parameter: 'X-Idempotency-Key' });
    }
    const query = request.query as InvokeQuery;
    // A workflow run request is keyed like an invoke of its workflow (docs/workflows.md#runs).
    const params = request.params as { tool_id?: string; workflow_id?: string };
    const scope = { keyId: request.principal!.keyId, toolId: params.tool_id ?? `workflow:${params.workflow_id}`, idempotencyKey };
    const claim = await this.idempotency.claim(scope, IdempotencyService.requestHash({ body: request.body, async: query.async, timeout: query.timeout }));
    if (claim.replay) {
      reply.status(claim.status).header('idempotent-replayed', 'true');
      if (typeof claim.body.status_url === 'string') reply.header('location', claim.body.status_url);
      return claim.body;
    }
    let answer: unknown;
    try {
      answer = await lastValueFrom(next.handle());
    } catch (err) {
      await this.idempotency.release(scope);
      throw err;
    }
    // The call ran: its answer is the client's even when it cannot be kept for replays (the database went
    // away meanwhile); a 503 here would say nothing was done and invite a second run.
    const body = answer instanceof InvokeAnswer ? answer.body : (answer as Record<string, unknown>);
    await this.idempotency.complete(scope, reply.statusCode, body).catch((err: Error) => request.log.warn(`X-Idempotency-Key answer not kept for replays: ${err.message}`));
    return answer;
  }
}
