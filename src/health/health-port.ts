import { Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppConfig } from '../config/app-config';
import { Readiness } from './readiness';

/**
 * GET /healthz and /readyz on HEALTH_PORT, plain HTTP, in every role: a worker has no other HTTP
 * to probe, and under TLS_CERT the main port speaks HTTPS that a container's probe need not trust.
 */
@Injectable()
export class HealthPort implements OnApplicationBootstrap, OnModuleDestroy {
  private server?: Server;

  constructor(
    private readonly config: AppConfig,
    private readonly readiness: Readiness,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.HEALTH_PORT === undefined) return;
    const server = createServer((request, response) => {
      const route = request.method === 'GET' ? request.url?.split('?')[0] : undefined;
      const answer = (status: number, body: object) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (route === '/healthz') return answer(200, { status: 'ok' });
      if (route !== '/readyz') return answer(404, { error: 'Only GET /healthz and /readyz here' });
      this.readiness.check().then(
        ({ ok, body }) => answer(ok ? 200 : 503, body),
        (err: Error) => answer(503, { status: 'unavailable', error: err.message }),
      );
    });
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(this.config.HEALTH_PORT, this.config.HOST, () => resolve()));
    this.server = server;
  }

  /** The port it listens on (HEALTH_PORT=0 picks a free one). */
  get port(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  async onModuleDestroy(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
  }
}
