/**
 * The embedded service's operator endpoint: operator commands (`tos accounts create`, `tos console
 * link`, …) reach the running service here instead of opening the database it holds. It is not
 * part of the public API and cannot become a way in for remote callers:
 *   - it listens on 127.0.0.1 on a port of its own (chosen by the system), never on HOST/PORT, and
 *     refuses any peer that is not loopback;
 *   - every request must carry the 256-bit random token that only `DATA_DIR/operator.json` (0600,
 *     new at every start) holds, compared in constant time; a Host header other than its own
 *     address is refused too (no DNS rebinding from a browser);
 *   - it runs only the named actions of OPERATOR_ACTIONS.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AppException } from '../common/errors';
import { AppConfig } from '../config/app-config';
import { AccountsService } from '../keys/accounts.service';
import { ApiKeysService } from '../keys/api-keys.service';
import { SecretsService } from '../secrets/secrets.service';
import { ConsoleSessions } from '../sessions/console-sessions.service';
import { UpstreamsService } from '../upstreams/upstreams.service';
import { isOperatorAction, OPERATOR_ACTIONS, OperatorServices } from './operator-actions';
import { writeOperatorFile } from './operator-file';

/** An operator request is a few names and numbers (a secret's value at most, 16 KiB). */
const MAX_BODY_BYTES = 64 * 1024;
const LOOPBACK = new Set(['127.0.0.1', '::ffff:127.0.0.1']);

const digest = (value: string) => createHash('sha256').update(value).digest();

@Injectable()
export class OperatorEndpoint implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OperatorEndpoint.name);
  private readonly token = randomBytes(32).toString('base64url');
  private server?: Server;
  private address = '';

  constructor(
    private readonly config: AppConfig,
    private readonly adapter: HttpAdapterHost,
    private readonly accounts: AccountsService,
    private readonly keys: ApiKeysService,
    private readonly secrets: SecretsService,
    private readonly consoleSessions: ConsoleSessions,
    private readonly upstreams: UpstreamsService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen({ host: '127.0.0.1', port: 0 }, resolve));
    this.server = server;
    this.address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    writeOperatorFile(this.config.DATA_DIR, { public_url: this.config.publicUrl, pid: process.pid, url: `http://${this.address}`, token: this.token });
    this.logger.log(`Operator commands reach this process at ${this.address} (loopback, token in DATA_DIR/operator.json)`);
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.server) return;
    try {
      writeOperatorFile(this.config.DATA_DIR, { public_url: this.publicUrl() });
    } catch (err) {
      this.logger.warn(`Cannot update DATA_DIR/operator.json: ${(err as Error).message}`);
    }
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }

  /** PUBLIC_URL, else where the service really listens (PORT=0 picks a port only at listen). */
  private publicUrl(): string {
    if (this.config.PUBLIC_URL) return this.config.publicUrl;
    const address = this.adapter.httpAdapter?.getHttpServer()?.address() as AddressInfo | string | null | undefined;
    return typeof address === 'object' && address ? `http://localhost:${address.port}` : this.config.publicUrl;
  }

  private authorized(req: IncomingMessage): boolean {
    if (!LOOPBACK.has(req.socket.remoteAddress ?? '') || req.headers.host !== this.address) return false;
    const presented = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    return presented !== undefined && timingSafeEqual(digest(presented), digest(this.token));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // One request per connection: the CLI exits as soon as it has its answer, with no idle socket to wait out.
    const reply = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify(body));
    if (!this.authorized(req)) return void reply(401, { error: { code: 'UNAUTHORIZED', message: 'Not an operator of this service' } });
    const action = /^\/operator\/([a-z.]+)$/.exec(req.url ?? '')?.[1];
    if (req.method !== 'POST' || !action || !isOperatorAction(action)) return void reply(404, { error: { code: 'NOT_FOUND', message: 'Unknown operator action' } });
    try {
      const args = await readJson(req);
      const services: OperatorServices = { accounts: this.accounts, keys: this.keys, secrets: this.secrets, consoleSessions: this.consoleSessions, upstreams: this.upstreams, publicUrl: this.publicUrl() };
      reply(200, { result: await OPERATOR_ACTIONS[action](services, args) });
    } catch (err) {
      if (err instanceof AppException) return void reply(err.status, { error: err.body });
      this.logger.error(`operator action ${action} failed: ${(err as Error).message}`);
      reply(500, { error: { code: 'INTERNAL_ERROR', message: 'The operator action failed; see the service log' } });
    }
  }
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw AppException.invalidRequest(`An operator request is at most ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw AppException.invalidRequest('The body must be a JSON object of arguments');
}
