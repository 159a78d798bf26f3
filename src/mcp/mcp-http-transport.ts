import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { McpAnswer } from './mcp-answer';

/** A request the Server is handling: the POST it came in on and the id its client gave it. */
export interface McpCall<Post> {
  post: Post;
  clientId: RequestId;
}

/**
 * The transport of the one SDK Server a process keeps (building a Server and a transport per POST
 * cost more than the rest of a call). Every client numbers its requests from 1, so requests get
 * process-unique ids on the way in and their own ids back on the way out; what a request handler
 * needs of its POST is looked up by the id the Server hands it.
 */
export class McpHttpTransport<Post extends { answer: McpAnswer }> implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;

  private lastId = 0;
  private readonly inFlight = new Map<number, McpCall<Post>>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  /** Hands one POST's requests to the Server; its answer receives their responses and notifications. */
  dispatch(requests: readonly JSONRPCRequest[], post: Post): void {
    for (const request of requests) {
      const id = ++this.lastId;
      this.inFlight.set(id, { post, clientId: request.id });
      this.onmessage?.({ ...request, id });
    }
  }

  /** Notifications need no answer and carry no id to rewrite. */
  deliver(message: JSONRPCMessage): void {
    this.onmessage?.(message);
  }

  call(id: RequestId): McpCall<Post> {
    const call = this.inFlight.get(id as number);
    if (!call) throw new Error(`No MCP request ${String(id)} in flight`);
    return call;
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ('id' in message && ('result' in message || 'error' in message)) {
      const call = this.inFlight.get(message.id as number);
      if (!call) return;
      this.inFlight.delete(message.id as number);
      call.post.answer.respond({ ...message, id: call.clientId });
    } else if (options?.relatedRequestId !== undefined) {
      this.inFlight.get(options.relatedRequestId as number)?.post.answer.notify(message);
    }
    // Anything else would go on the standalone GET stream, which a stateless server does not offer.
  }
}
