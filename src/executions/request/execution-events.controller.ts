import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CurrentPrincipal, RequireScopes } from '../../identity/auth.decorators';
import { openEventStream } from '../../common/event-stream';
import type { Principal } from '../../identity/principal';
import { ExecutionEvent, ExecutionEventBus } from '../engine/events/execution-events';
import { TERMINAL_STATUSES } from '../engine/execution.entity';
import { executionView } from './execution-views';
import { ExecutionsService } from './executions.service';

/** Comment lines keep proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;

/**
 * GET /v1/executions/{id}/events: Server-Sent Events. `status` and `progress` events as they
 * happen (from whichever process runs the execution), then one `result` event with the final
 * execution record, then the stream ends.
 */
@Controller()
export class ExecutionEventsController {
  constructor(
    private readonly executions: ExecutionsService,
    private readonly events: ExecutionEventBus,
  ) {}

  @Get('v1/executions/:execution_id/events')
  @RequireScopes('executions:read')
  async stream(@CurrentPrincipal() principal: Principal, @Param('execution_id') id: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    // Subscribe before reading, so nothing that happens in between is missed.
    const buffered: ExecutionEvent[] = [];
    let forward: (event: ExecutionEvent) => void = (event) => buffered.push(event);
    const unsubscribe = this.events.subscribe(id, (event) => forward(event));
    let current;
    try {
      current = await this.executions.get(principal, id);
    } catch (err) {
      unsubscribe();
      throw err;
    }

    const raw = openEventStream(reply);
    const send = (event: string, data: unknown) => raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    const keepalive = setInterval(() => raw.write(': keepalive\n\n'), KEEPALIVE_MS);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      clearInterval(keepalive);
      unsubscribe();
      raw.end();
    };
    const finish = async () => {
      const final = await this.executions.get(principal, id).catch(() => null);
      if (final) send('result', executionView(final));
      end();
    };
    request.raw.on('close', end);

    send('status', { execution_id: id, status: current.status, progress: current.progress });
    if (TERMINAL_STATUSES.has(current.status)) return finish();
    forward = (event) => {
      if (ended) return;
      if (event.type === 'progress') send('progress', { execution_id: id, progress: event.progress, message: event.message });
      else {
        send('status', { execution_id: id, status: event.status, progress: event.progress });
        if (TERMINAL_STATUSES.has(event.status)) {
          forward = () => undefined; // one result event, however many processes report the end
          void finish();
        }
      }
    };
    for (const event of buffered.splice(0)) forward(event);
  }
}
