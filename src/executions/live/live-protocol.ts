/**
 * The JSON messages of GET /v1/ws (docs/executions.md#live-updates-over-websocket): what a client
 * may send, checked before anything acts on it, and the close codes the server uses.
 */
import { z } from 'zod';

/** Close codes (4000–4999 are the application's own, RFC 6455 §7.4.2). */
export const CLOSE = {
  /** No key, a wrong one, or no `auth` message within AUTH_TIMEOUT_MS. */
  unauthorized: 4401,
  /** The key lacks the `executions:read` scope. */
  forbidden: 4403,
  /** Nothing came from the client (a message or a pong) for the idle timeout. */
  idle: 4408,
  /** The key already holds MAX_SOCKETS_PER_KEY sockets. */
  tooManySockets: 4429,
  /** The server is shutting down: reconnect (to another replica) and resume. */
  goingAway: 1001,
} as const;

export const LIMITS = {
  /** A browser has this long to send `{ "type": "auth" }`. */
  AUTH_TIMEOUT_MS: 5_000,
  SUBSCRIPTIONS_PER_SOCKET: 100,
  MAX_SOCKETS_PER_KEY: 20,
  /** Larger client messages close the socket (1009); none needs more. */
  MAX_MESSAGE_BYTES: 16 * 1024,
  /** Executions replayed per subscription on resume, newest first. */
  RESUME_LIMIT: 100,
} as const;

const id = z.string().min(1).max(200);
/** A sequence number a client saw (`seq` of an event). */
const after = z.number().int().nonnegative();

/** What a subscription follows: one execution, one tool's executions, or all the account's. */
const target = z.union([
  z.object({ execution_id: id }).strict(),
  z.object({ tool_id: id }).strict(),
  z.object({ all: z.literal(true) }).strict(),
]);

const clientMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('auth'), key: z.string().max(200) }).strict(),
  z.object({ type: z.literal('subscribe'), execution_id: id.optional(), tool_id: id.optional(), all: z.literal(true).optional(), after: after.optional() }).strict(),
  z.object({ type: z.literal('unsubscribe'), execution_id: id.optional(), tool_id: id.optional(), all: z.literal(true).optional() }).strict(),
  z.object({ type: z.literal('ping') }).strict(),
]);

export type ClientMessage = z.infer<typeof clientMessage>;
export type Target = z.infer<typeof target>;

/** The subscription's name in `subscribed`/`unsubscribed` answers and on each event. */
export function subscriptionName(t: Target): string {
  if ('execution_id' in t) return `execution:${t.execution_id}`;
  if ('tool_id' in t) return `tool:${t.tool_id}`;
  return 'all';
}

/** The target a subscribe/unsubscribe message names: exactly one of execution_id, tool_id, all. */
export function targetOf(message: { execution_id?: string; tool_id?: string; all?: true }): Target | null {
  const parsed = target.safeParse(Object.fromEntries(Object.entries({ execution_id: message.execution_id, tool_id: message.tool_id, all: message.all }).filter(([, v]) => v !== undefined)));
  return parsed.success ? parsed.data : null;
}

export type Parsed = { ok: true; message: ClientMessage } | { ok: false; error: string };

/** A text frame as a client message, or why it is not one. */
export function parseClientMessage(text: string): Parsed {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, error: 'not JSON: send one JSON object per message' };
  }
  const parsed = clientMessage.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, error: `${issue.path.length ? `'${issue.path.join('.')}': ` : ''}${issue.message}` };
  }
  return { ok: true, message: parsed.data };
}
