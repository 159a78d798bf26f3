/**
 * A loopback chat service held to the shapes of Slack's documentation (incoming webhooks answer
 * `ok` or a plain-text error; the Web API answers HTTP 200 `{ ok, error }`, 429 with Retry-After
 * when rate-limited), plus Teams (`1`) and Discord (204) incoming webhooks. Magic channel and
 * webhook names make it fail the ways the real services do.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenHttp } from '../http-listen';

export const CHAT_FAKE_TOKEN = 'xoxb-example-token';

export interface ChatRequest {
  path: string;
  authorization?: string;
  body: Record<string, unknown>;
}

export interface ChatFake {
  /** `http://<address>:<port>` */
  url: string;
  requests: ChatRequest[];
  close(): Promise<void>;
}

function parse(req: IncomingMessage, raw: string): Record<string, unknown> {
  if ((req.headers['content-type'] ?? '').includes('application/x-www-form-urlencoded')) {
    return Object.fromEntries(new URLSearchParams(raw));
  }
  try {
    return JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return {};
  }
}

function webApi(path: string, auth: string | undefined, body: Record<string, unknown>, res: ServerResponse): void {
  const json = (status: number, payload: unknown, headers: Record<string, string> = {}): void =>
    void res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(payload));
  if (path !== '/api/chat.postMessage') return json(200, { ok: false, error: 'unknown_method' });
  if (auth !== `Bearer ${CHAT_FAKE_TOKEN}`) return json(200, { ok: false, error: 'invalid_auth' });
  const channel = String(body.channel ?? '');
  if (channel === 'CRATELIMIT') return json(429, { ok: false, error: 'ratelimited' }, { 'retry-after': '3' });
  if (channel === 'CFAIL') return json(500, { ok: false, error: 'internal_error' });
  if (!channel.startsWith('C') || channel === 'C404') return json(200, { ok: false, error: 'channel_not_found' });
  if (!body.text && !body.blocks) return json(200, { ok: false, error: 'no_text' });
  json(200, { ok: true, channel, ts: '1700000001.000200', message: { type: 'message', text: body.text, ...(body.thread_ts ? { thread_ts: body.thread_ts } : {}) } });
}

function webhook(path: string, body: Record<string, unknown>, res: ServerResponse): void {
  const text = (status: number, payload: string): void => void res.writeHead(status, { 'content-type': 'text/plain' }).end(payload);
  if (path.endsWith('/GONE')) return text(404, 'no_service');
  if (path.endsWith('/FAIL')) return text(500, 'internal error');
  if (path.endsWith('/LIMIT')) return void res.writeHead(429, { 'retry-after': '2' }).end('rate limited');
  if (path.startsWith('/services/')) return body.text || body.blocks ? text(200, 'ok') : text(400, 'invalid_payload');
  if (path.startsWith('/teams/')) return body.text ? text(200, '1') : text(400, 'Text is required');
  if (path.startsWith('/discord/')) return body.content ? void res.writeHead(204).end() : void res.writeHead(400, { 'content-type': 'application/json' }).end('{"message":"Cannot send an empty message","code":50006}');
  text(404, 'not found');
}

export async function startChatFake(address = '127.0.0.1', port = 0): Promise<ChatFake> {
  const requests: ChatRequest[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0];
      const body = parse(req, raw);
      requests.push({ path, authorization: req.headers.authorization, body });
      if (path === '/hang') return;
      if (path.startsWith('/api/')) webApi(path, req.headers.authorization, body, res);
      else webhook(path, body, res);
    });
  });
  return { ...(await listenHttp(server, address, port)), requests };
}
