import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { WebSocketServer } from 'ws';
import { AccessTokenVerifier } from '../../auth/access-token-verifier';
import { KeyVerifier } from '../../auth/key-verifier';
import { AppConfig } from '../../config/app-config';
import type { Principal } from '../../identity/principal';
import { WINDOW_MS, WindowStore } from '../../limits/window-store';
import { LIMITS } from './live-protocol';
import { LiveSocket } from './live-socket';
import { LiveUpdates } from './live-updates';

export const LIVE_PATH = '/v1/ws';
const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * GET /v1/ws (docs/executions.md#live-updates-over-websocket) on the application's HTTP server,
 * through the `ws` library. A key or OAuth access token (for the `/v1` resource) in the
 * Authorization header is checked before the upgrade (a wrong one gets an HTTP 401); without one,
 * the socket opens and waits for an `auth` message (keys only).
 */
export function installLiveEndpoint(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  const hub = app.get(LiveUpdates);
  const verifier = app.get(KeyVerifier);
  const tokens = app.get(AccessTokenVerifier);
  const idleTimeoutMs = app.get(AppConfig).WS_IDLE_TIMEOUT_SECONDS * 1000;
  const wss = new WebSocketServer({ noServer: true, maxPayload: LIMITS.MAX_MESSAGE_BYTES });
  const windows = app.get(WindowStore);
  const ipLimit = app.get(AppConfig).IP_RATE_LIMIT;
  // A wrong key counts against its client IP's window as over REST (docs/API.md#rate-limits-and-quotas), so sockets cannot guess keys faster.
  const countFailure = async (request: IncomingMessage) => (await windows.hit(`ip:${request.socket.remoteAddress}`, ipLimit, WINDOW_MS)).allowed;

  fastify.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? '/', 'http://host');
    if (url.pathname !== LIVE_PATH) return refuse(socket, 404, 'NOT_FOUND', `No WebSocket at ${url.pathname}: live updates are at ${LIVE_PATH}`);
    const afterText = url.searchParams.get('after');
    const after = afterText === null ? undefined : Number(afterText);
    if (after !== undefined && !(Number.isSafeInteger(after) && after >= 0)) return refuse(socket, 400, 'INVALID_REQUEST', "Invalid parameter 'after': expected the seq of an event");
    const upgrade = (principal: Principal | null) =>
      wss.handleUpgrade(request, socket, head, (ws) => new LiveSocket(ws, hub, { verify: (key) => verifyMessageKey(key, request), idleTimeoutMs, after }, principal));
    const verifyMessageKey = async (key: string, from: IncomingMessage) => {
      const verification = await verifier.verify(key);
      if (!verification.ok) await countFailure(from);
      return verification;
    };
    const header = request.headers.authorization;
    if (!header) return upgrade(null);
    const secret = BEARER.exec(header)?.[1];
    if (!secret) return refuse(socket, 401, 'UNAUTHORIZED', 'Malformed Authorization header: expected "Bearer <API key>"');
    if (tokens.accepts(secret)) {
      tokens
        .verify(secret, '/v1')
        .then(async (verification) => {
          if (verification.ok) return upgrade(verification.principal);
          if (!(await countFailure(request))) return refuse(socket, 429, 'RATE_LIMITED', 'Too many requests without a valid key from this address: retry in a minute');
          refuse(socket, 401, 'UNAUTHORIZED', verification.message);
        })
        .catch(() => refuse(socket, 503, 'SERVICE_UNAVAILABLE', 'Access tokens cannot be verified right now'));
      return;
    }
    verifier
      .verify(secret)
      .then(async (verification) => {
        if (verification.ok) return upgrade(verification.principal);
        if (!(await countFailure(request))) return refuse(socket, 429, 'RATE_LIMITED', 'Too many requests without a valid key from this address: retry in a minute');
        refuse(socket, 401, 'UNAUTHORIZED', `API key ${verification.reason}`);
      })
      .catch(() => refuse(socket, 503, 'SERVICE_UNAVAILABLE', 'Keys cannot be verified right now'));
  });
  // Open sockets would hold the HTTP server's close open (SIGTERM's drain closes it first).
  fastify.addHook('preClose', async () => hub.closeAll());
}

/** An HTTP answer in the error envelope of docs/API.md#errors, instead of the upgrade. */
function refuse(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ error: { code, message } });
  socket.end(`HTTP/1.1 ${status} ${code}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}
