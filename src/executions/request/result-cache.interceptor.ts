import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { map, type Observable } from 'rxjs';
import { setCachedResultHeaders } from '../../common/http-cache';
import { InvokeAnswer } from './invoke-answer';

/**
 * The result cache as HTTP sees it (docs/API.md#caching): a successful result served from the
 * cache, or just stored in it, carries ETag, Last-Modified and Cache-Control. The lookup and the
 * store are InvocationService's, shared with MCP tools/call.
 */
@Injectable()
export class ResultCacheInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    return next.handle().pipe(
      map((answer: unknown) => {
        // Only a success is cached (InvocationService), so a cache use is a success's.
        if (answer instanceof InvokeAnswer && answer.cache) setCachedResultHeaders(reply, answer.cache.etag, answer.cache.storedAt, answer.cache.ttl);
        return answer;
      }),
    );
  }
}
