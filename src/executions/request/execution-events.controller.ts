import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CurrentPrincipal, RequireScopes } from '../../identity/auth.decorators';
import { openLiveStream } from '../../common/event-stream';
import type { Principal } from '../../identity/principal';
import { ExecutionEvent, ExecutionEventBus } from '../engine/events/execution-events';
import { TERMINAL_STATUSES } from '../engine/execution.entity';
import { executionView } from './execution-views';
import { ExecutionsService } from './executions.service';

/** How soon a client whose stream dropped reconnects (the `retry` field). */
const RECONNECT_MS = 2_000;
/** The `result` event's id: a client that reconnects after it is told there is nothing more (204). */
const END_ID = 'end';

/**
 * An event's id is the state it leaves the client in (`status:progress`), so that a stream resumed
 * with `Last-Event-ID` repeats nothing the client has seen: events are not stored, and the state
 * is all a missed run of progress events amounts to.
 */
const stateId = (status: string, progress: number) => `${status}:${progress}`;

/**
 * GET /v1/executions/{id}/events: Server-Sent Events. `status` and `progress` events as they
 * happen (from whichever process runs the execution), then one `result` event with the final
 * execution record, then the stream ends. Every event has an id, so a dropped stream resumes
 * with `Last-Event-ID`.
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
    const lastEventId = request.headers['last-event-id'];
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

    const terminal = TERMINAL_STATUSES.has(current.status);
    // Resumed after the result: nothing follows, and 204 tells an EventSource not to reconnect.
    if (lastEventId === END_ID && terminal) {
      unsubscribe();
      return reply.status(204).send();
    }
    const stream = openLiveStream(reply, unsubscribe, RECONNECT_MS);
    const send = stream.send;
    const finish = async () => {
      const final = await this.executions.get(principal, id).catch(() => null);
      if (final) send('result', executionView(final), END_ID);
      stream.end();
    };

    // A resumed stream skips the state its client already holds.
    const currentId = stateId(current.status, current.progress);
    if (lastEventId !== currentId) send('status', { execution_id: id, status: current.status, progress: current.progress }, currentId);
    if (terminal) return finish();
    let status = { status: current.status as string, progress: current.progress };
    forward = (event) => {
      if (stream.ended) return;
      if (event.type === 'progress') {
        status = { ...status, progress: event.progress };
        send('progress', { execution_id: id, progress: event.progress, message: event.message }, stateId(status.status, event.progress));
      } else {
        status = { status: event.status, progress: event.progress };
        send('status', { execution_id: id, status: event.status, progress: event.progress }, stateId(event.status, event.progress));
        if (TERMINAL_STATUSES.has(event.status)) {
          forward = () => undefined; // one result event, however many processes report the end
          void finish();
        }
      }
    };
    for (const event of buffered.splice(0)) forward(event);
  }
}
