/**
 * A raw MCP 2026-07-28 `subscriptions/listen` client (the SDK v2 client has no listen API): opens
 * the stream, collects its messages as they come, and waits for the first (the acknowledgement,
 * or the error that refused it).
 */
import { until } from './poll';

const MODERN = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'e2e-listen', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

export type ListenMessage = { jsonrpc: '2.0'; id?: unknown; method?: string; params?: Record<string, any>; result?: any; error?: { code: number; message: string } };

/** An open `subscriptions/listen` stream: the messages read so far, and how to end it. */
export interface Listening {
  status: number;
  messages: ListenMessage[];
  close(): void;
}

/** Opens a stream at `url` (the MCP endpoint) with `key`; `opened` collects it, for the test to close. */
export async function listen(url: string, key: string, notifications: Record<string, unknown>, opened: Listening[], id: unknown = 1): Promise<Listening> {
  const abort = new AbortController();
  const res = await fetch(url, {
    method: 'POST',
    signal: abort.signal,
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'subscriptions/listen',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications, _meta: ENVELOPE } }),
  });
  const stream: Listening = { status: res.status, messages: [], close: () => abort.abort() };
  opened.push(stream);
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    stream.messages.push((await res.json()) as ListenMessage);
    return stream;
  }
  void (async () => {
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const frame = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const data = frame.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n');
        if (data) stream.messages.push(JSON.parse(data) as ListenMessage);
      }
    }
  })().catch(() => undefined); // aborted at the test's end
  await until('the subscription acknowledged', async () => stream.messages.length > 0 || undefined, 5_000, 20);
  return stream;
}

/** The `notifications/tools/list_changed` a stream heard. */
export const listChanges = (stream: Listening) => stream.messages.filter((message) => message.method === 'notifications/tools/list_changed');
