import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { openLiveStream } from '../common/event-stream';
import { CurrentPrincipal, RequireScopes } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { TERMINAL_STATUSES } from '../executions/engine/execution.entity';
import { ExecutionEventBus, type ExecutionEvent } from '../executions/engine/events/execution-events';
import { RunGraphs, type RunGraph } from './run-graph';

/** The last event's id: a client that reconnects after it is told there is nothing more (204). */
const END_ID = 'end';

const belongsTo = (runId: string, event: ExecutionEvent) => event.execution_id === runId || (event.type === 'status' && event.run_id === runId);

/** A workflow run as a graph (docs/workflows.md#a-runs-graph), read once or followed live. */
@Controller()
export class RunGraphController {
  constructor(
    private readonly graphs: RunGraphs,
    private readonly events: ExecutionEventBus,
  ) {}

  @Get('v1/workflows/runs/:run_id')
  @RequireScopes('executions:read')
  get(@CurrentPrincipal() principal: Principal, @Param('run_id') runId: string): Promise<RunGraph> {
    return this.graphs.get(principal, runId);
  }

  /**
   * Server-Sent Events: a `graph` event with the whole graph at once and again after each change of
   * the run or of one of its steps (changes that arrive while it is read are folded into the next
   * read), the last one once the run has ended; then the stream ends. Each event is the whole
   * state, so a reconnecting client misses nothing.
   */
  @Get('v1/workflows/runs/:run_id/events')
  @RequireScopes('executions:read')
  async stream(@CurrentPrincipal() principal: Principal, @Param('run_id') runId: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    let changed = false;
    let onChange = () => void (changed = true);
    // Subscribe before the first read, so nothing that happens in between is missed.
    const unsubscribe = this.events.subscribeAll((event) => belongsTo(runId, event) && onChange());
    let first: RunGraph;
    try {
      first = await this.graphs.get(principal, runId);
    } catch (err) {
      unsubscribe();
      throw err;
    }
    if (request.headers['last-event-id'] === END_ID && TERMINAL_STATUSES.has(first.run.status)) {
      unsubscribe();
      return reply.status(204).send();
    }
    const stream = openLiveStream(reply, unsubscribe);
    const send = (graph: RunGraph) => {
      const last = TERMINAL_STATUSES.has(graph.run.status);
      stream.send('graph', graph, last ? END_ID : String(graph.run.progress));
      if (last) stream.end();
    };
    let reading = false;
    const refresh = async () => {
      reading = true;
      while (changed && !stream.ended) {
        changed = false;
        const graph = await this.graphs.get(principal, runId).catch(() => null);
        if (!graph) return stream.end();
        send(graph);
      }
      reading = false;
    };
    onChange = () => {
      changed = true;
      if (!reading) void refresh();
    };
    send(first);
    if (changed && !stream.ended) void refresh();
  }
}
