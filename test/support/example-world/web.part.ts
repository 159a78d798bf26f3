/**
 * The web of the health-check and webhook-trigger examples: `status.example.test` and
 * `hooks.example.test` on 8080 (HTTP) and 8443 (HTTPS, a leaf of the world's CA).
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createHmac } from 'node:crypto';
import type { WorldPart } from './world';

/** The signing secret of the webhook examples' receiver (an example's input names it inline). */
export const EXAMPLE_WEBHOOK_SECRET = 'whsec_ZXhhbXBsZS13b3JsZC1zaWduaW5nLWtleSE=';

function route(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const send = (status: number, payload: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    if (req.url === '/healthz') return send(200, { status: 'ok' });
    if (req.url === '/old-health') return void res.writeHead(301, { location: '/healthz' }).end();
    // For the egress tests: a redirect from an allowed name to a loopback literal.
    if (req.url?.startsWith('/redirect?to=')) return void res.writeHead(302, { location: decodeURIComponent(req.url.slice('/redirect?to='.length)) }).end();
    if (req.url === '/hooks/deploy' && req.method === 'POST') {
      const signature = req.headers['x-signature'];
      const expected = `sha256=${createHmac('sha256', EXAMPLE_WEBHOOK_SECRET).update(body).digest('hex')}`;
      return send(202, { accepted: true, verified: signature === expected });
    }
    // A Slack incoming webhook, as the chat-notify example posts to it.
    if (req.url?.startsWith('/services/') && req.method === 'POST') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    send(404, { error: 'not found' });
  });
}

function listen(server: Server, port: number, address: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => resolve());
  });
}

export const part: WorldPart = {
  name: 'web',
  async start(world) {
    const plain = createHttpServer(route);
    const secure = createHttpsServer({ ...world.issueCertificate(['status.example.test', 'hooks.example.test'], { days: 30 }) }, route);
    await listen(plain, 8080, world.address);
    await listen(secure, 8443, world.address);
    return {
      stop: async () => {
        for (const server of [plain, secure]) {
          server.closeAllConnections();
          await new Promise((resolve) => server.close(resolve));
        }
      },
    };
  },
};
