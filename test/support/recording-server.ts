/** A loopback HTTP server for tests that records every request and answers as the test says. */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { listenHttp } from './http-listen';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Status, headers and body to answer with; null never answers (a hung upstream). */
export type Answer = { status: number; headers?: Record<string, string>; body?: string } | null;

export interface RecordingServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Everything received since start or the last `clear()`. */
  readonly received: RecordedRequest[];
  clear(): void;
  close(): Promise<void>;
}

export async function startRecordingServer(answer: (request: RecordedRequest) => Answer): Promise<RecordingServer> {
  const received: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk));
    req.on('end', () => {
      const request = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body };
      received.push(request);
      const reply = answer(request);
      if (reply) res.writeHead(reply.status, reply.headers).end(reply.body ?? '');
    });
  });
  return { ...(await listenHttp(server)), received, clear: () => void received.splice(0) };
}
