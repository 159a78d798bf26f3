import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyReply } from 'fastify';
import { setMaxListeners } from 'node:events';
import type { ServerResponse } from 'node:http';
import { callerGone } from '../common/caller-gone';
import { openEventStream } from '../common/event-stream';

/** Comment frames on an idle stream, so proxies keep a long call's connection open. */
const KEEPALIVE_MS = 15_000;

/**
 * The answer to one POST of JSON-RPC requests: one JSON body once every request has its response
 * (an array for a batch), or, for a client that asked for progress, an SSE stream carrying the
 * notifications as they come and each response, closed after the last.
 */
export class McpAnswer {
  /** Settles when the answer is written, or the client left before it was. */
  readonly done: Promise<void>;
  private readonly responses: JSONRPCMessage[] = [];
  private stream?: ServerResponse;
  private keepalive?: NodeJS.Timeout;
  private ended = false;
  /** Made for the first call that runs a tool. */
  private gone?: AbortSignal;
  private finish!: () => void;

  constructor(
    private readonly reply: FastifyReply,
    private readonly expected: number,
    private readonly batch: boolean,
    streamed: boolean,
  ) {
    this.done = new Promise((resolve) => (this.finish = resolve));
    reply.raw.once('close', () => this.end());
    if (streamed) {
      this.stream = openEventStream(reply);
      this.keepalive = setInterval(() => this.stream!.write(': keepalive\n\n'), KEEPALIVE_MS).unref();
    }
  }

  /** Calls `listener` if the client leaves before the answer is written (at once if it has); returns its removal. */
  whenGone(listener: () => void): () => void {
    // Every call of a batch watches the one POST: as many listeners as requests is no leak.
    if (!this.gone) {
      this.gone = callerGone(this.reply);
      setMaxListeners(this.expected + 1, this.gone);
    }
    const gone = this.gone;
    if (gone.aborted) listener();
    else gone.addEventListener('abort', listener, { once: true });
    return () => gone.removeEventListener('abort', listener);
  }

  notify(message: JSONRPCMessage): void {
    if (!this.ended) this.stream?.write(event(message));
  }

  respond(message: JSONRPCMessage): void {
    if (this.ended) return;
    this.responses.push(message);
    this.stream?.write(event(message));
    if (this.responses.length < this.expected) return;
    if (this.stream) this.stream.end();
    else void this.reply.type('application/json').send(JSON.stringify(this.batch ? this.responses : this.responses[0]));
    this.end();
  }

  private end(): void {
    this.ended = true;
    clearInterval(this.keepalive);
    this.finish();
  }
}

function event(message: JSONRPCMessage): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}
