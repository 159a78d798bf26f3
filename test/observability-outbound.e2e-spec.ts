/**
 * The outbound-call hook `ctx.http` wraps its requests in: a client span under the
 * execution's span and a W3C traceparent the upstream receives, driven through `ctx.http`.
 */
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EgressPool } from '../src/tools/egress/egress';
import { createToolHttp } from '../src/tools/egress/tool-network';
import { observeExecution } from '../src/common/probes';
import { ServiceTracing } from '../src/observability/tracing';
import { until } from './support/poll';
import { OtlpReceiver, startOtlpReceiver } from './observability/otlp-receiver';

describe('outbound call tracing', () => {
  let receiver: OtlpReceiver;
  let upstream: Server;
  let upstreamUrl: string;
  const received: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    upstream = createServer((request, response) => {
      received.push(request.headers);
      response.writeHead(request.url?.startsWith('/broken') ? 503 : 200).end();
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    upstream.closeAllConnections(); // fetch keeps its connections alive
    await new Promise((resolve) => upstream.close(resolve));
    await receiver.stop();
  });

  const http = createToolHttp(new EgressPool().for({ allow: '127.0.0.0/8' }), new AbortController().signal);
  const call = (path: string) => http.request(`${upstreamUrl}${path}?token=not-for-spans`, { headers: { accept: 'application/json' } });

  it('sends nothing extra while tracing is off', async () => {
    expect((await call('/plain')).status).toBe(200);
    expect(received.at(-1)).not.toHaveProperty('traceparent');
  });

  it('gives each call a client span under the execution and propagates traceparent to the upstream', async () => {
    const tracing = new ServiceTracing(receiver.endpoint, 'all');
    tracing.start();
    try {
      await observeExecution({ executionId: 'exec_outbound', toolId: 'http-tool', accountId: 'acc_outbound', keyId: 'key_outbound' }, async () => {
        expect((await call('/ok')).status).toBe(200);
        expect((await call('/broken')).status).toBe(503);
        return { status: 'success' };
      });
    } finally {
      await tracing.stop(); // flushes
    }
    const execution = await until('the execution span', async () => receiver.spans.find((s) => s.attributes['tos.execution.id'] === 'exec_outbound'));
    const clients = receiver.spans.filter((s) => s.kind === 3);
    expect(clients).toHaveLength(2);
    for (const [i, client] of clients.entries()) {
      expect(client).toMatchObject({ traceId: execution.traceId, parentSpanId: execution.spanId, name: 'GET' });
      expect(client.attributes).toMatchObject({ 'server.address': '127.0.0.1', 'url.scheme': 'http', 'http.response.status_code': i === 0 ? 200 : 503 });
      expect(received.at(i - 2)!.traceparent).toBe(`00-${client.traceId}-${client.spanId}-01`);
    }
    expect(JSON.stringify(receiver.spans)).not.toContain('not-for-spans');
  });
});
