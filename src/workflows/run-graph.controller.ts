import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { openEventStream } from '../common/event-stream';
import { CurrentPrincipal, RequireScopes } from '../identity/auth.decorators';
import type { Principal } from '../identity/principal';
import { TERMINAL_STATUSES } from '../executions/engine/execution.entity';
import { ExecutionEventBus, type ExecutionEvent } from '../executions/engine/events/execution-events';
import { RunGraphs, type RunGraph } from './run-graph';

/** Comment lines keep proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;
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
    const raw = openEventStream(reply);
    const keepalive = setInterval(() => raw.write(': keepalive\n\n'), KEEPALIVE_MS);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      clearInterval(keepalive);
      unsubscribe();
      raw.end();
    };
    request.raw.on('close', end);
    const send = (graph: RunGraph) => {
      const last = TERMINAL_STATUSES.has(graph.run.status);
      raw.write(`event: graph\ndata: ${JSON.stringify(graph)}\nid: ${last ? END_ID : graph.run.progress}\n\n`);
      if (last) end();
    };
    let reading = false;
    const refresh = async () => {
      reading = true;
      while (changed && !ended) {
        changed = false;
        const graph = await this.graphs.get(principal, runId).catch(() => null);
        if (!graph) return end();
        send(graph);
      }
      reading = false;
    };
    onChange = () => {
      changed = true;
      if (!reading) void refresh();
    };
    send(first);
    if (changed && !ended) void refresh();
  }
}
