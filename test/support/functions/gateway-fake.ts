/**
 * A loopback function gateway in OpenFaaS's shape (`/function/<name>`, 404 "error finding function"
 * for an unknown one, 502 when a function fails) that also routes Knative-style by Host header
 * (`<name>.<namespace>.<domain>`). Functions: echo, slow (sleeps `ms` from the query), fail, huge.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenHttp } from '../http-listen';

export interface GatewayFake {
  url: string;
  calls: { name: string; method: string; body: string; contentType?: string }[];
  close(): Promise<void>;
}

function run(name: string, req: IncomingMessage, body: string, res: ServerResponse): void {
  const callHeaders = { 'x-call-id': 'call-0001', 'x-duration-seconds': '0.001', 'x-internal-secret': 'not-for-callers' };
  switch (name) {
    case 'echo':
      return void res.writeHead(200, { ...callHeaders, 'content-type': req.headers['content-type'] ?? 'text/plain' }).end(body);
    case 'slow': {
      const ms = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('ms') ?? 1000);
      setTimeout(() => res.writeHead(200, callHeaders).end('done'), ms);
      return;
    }
    case 'fail':
      return void res.writeHead(502, { 'content-type': 'text/plain', 'retry-after': '4' }).end('exit status 1');
    case 'huge':
      return void res.writeHead(200, { ...callHeaders, 'content-type': 'text/plain' }).end('x'.repeat(3 * 1024 * 1024));
    default:
      return void res.writeHead(404, { 'content-type': 'text/plain' }).end(`error finding function ${name}: not found`);
  }
}

export async function startGatewayFake(address = '127.0.0.1', port = 0): Promise<GatewayFake> {
  const calls: GatewayFake['calls'] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0];
      const routed = /^\/function\/([^/]+)/.exec(path)?.[1] ?? (req.headers.host ?? '').split('.')[0];
      calls.push({ name: routed, method: req.method ?? 'GET', body, contentType: req.headers['content-type'] });
      run(routed, req, body, res);
    });
  });
  return { ...(await listenHttp(server, address, port)), calls };
}
