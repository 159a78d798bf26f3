import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createToolHttp, createToolNet } from './tool-network';
import { Egress, EgressPool, type LookupFunction } from './egress';
import { refusedClass } from './address-policy';
import { ToolError } from '../sdk';
import { egressRefusals } from '../sdk/network-errors';

/** A resolver stub: every name resolves to `address`, so refusals are tested without a packet. */
const answering = (address: string): LookupFunction => (_host, options, callback) =>
  options.all ? callback(null, [{ address, family: address.includes(':') ? 6 : 4 }]) : callback(null, address, 4);

describe('egress policy', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/redirect-out') return void res.writeHead(302, { location: 'http://10.0.0.1/' }).end();
      if (req.url === '/big') return void res.end('x'.repeat(5000));
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ ua: req.headers['user-agent'] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const signal = new AbortController().signal;

  it.each([
    ['127.0.0.1', 'loopback'], ['10.1.2.3', 'private (RFC 1918)'], ['172.16.0.1', 'private (RFC 1918)'], ['192.168.1.1', 'private (RFC 1918)'],
    ['169.254.169.254', 'link-local'], ['100.64.0.1', 'carrier-grade NAT'], ['0.0.0.0', 'this network'], ['224.0.0.1', 'multicast'],
    ['240.0.0.1', 'reserved'], ['::1', 'loopback'], ['fe80::1', 'link-local'], ['fd12::1', 'unique local'], ['::ffff:10.0.0.1', 'private (RFC 1918)'],
    ['::ffff:a9fe:a9fe', 'link-local'], ['::127.0.0.1', 'loopback'], ['8.8.8.8', null], ['2606:4700::1111', null],
  ])('classifies %s as %s', (address, label) => expect(refusedClass(address)).toBe(label));

  it('lets an allowed loopback call through, with the service User-Agent', async () => {
    const http = createToolHttp(new Egress({ allow: '127.0.0.0/8' }), signal);
    const response = await http.request(`http://127.0.0.1:${port}/`);
    expect(response.status).toBe(200);
    expect(response.json<{ ua: string }>().ua).toMatch(/^tool-orchestration-service\//);
  });

  it.each(['http://127.0.0.1:PORT/', 'http://2130706433:PORT/', 'http://0x7f.1:PORT/', 'http://127.1:PORT/', 'http://[::ffff:127.0.0.1]:PORT/', 'http://localhost:PORT/'])(
    'refuses %s by default as INVALID_INPUT naming the parameter',
    async (url) => {
      const http = createToolHttp(new Egress(), signal);
      const err = await http.request(url.replace('PORT', String(port)), { parameter: 'target' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ToolError);
      expect(err).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'target', expected: 'a public address' }, suggestion: expect.stringContaining('EGRESS_ALLOW') });
    },
  );

  it.each(['10.0.0.1', '169.254.169.254', '100.64.0.1', 'fd00::1', '::ffff:192.168.0.1'])('refuses a name resolving to %s at the connect-time lookup hook', async (address) => {
    const egress = new Egress({ lookup: answering(address) });
    const http = createToolHttp(egress, signal);
    await expect(http.request('http://rebind.example/')).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { received: 'rebind.example' } });
    await expect(createToolNet(egress, signal).connect({ host: 'rebind.example', port: 80 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    const socket = egress.agents.http.createConnection({ host: 'rebind.example', port: 80 }) as Socket;
    await expect(new Promise((resolve, reject) => socket.once('error', reject).once('connect', resolve))).rejects.toThrow(/refused/);
  });

  it('reports each refusal on the egress-refusals channel (the metric counts it)', async () => {
    const seen: unknown[] = [];
    const listener = (message: unknown) => seen.push(message);
    egressRefusals.subscribe(listener);
    try {
      await createToolHttp(new Egress(), signal).request(`http://127.0.0.1:${port}/`, { parameter: 'target' }).catch(() => undefined);
    } finally {
      egressRefusals.unsubscribe(listener);
    }
    expect(seen).toEqual([{ parameter: 'target' }]);
  });

  it('checks each redirect target again', async () => {
    const http = createToolHttp(new Egress({ allow: '127.0.0.1' }), signal);
    await expect(http.request(`http://127.0.0.1:${port}/redirect-out`)).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { received: '10.0.0.1' } });
  });

  it('caps the body', async () => {
    const http = createToolHttp(new Egress({ allow: '127.0.0.1' }), signal);
    const response = await http.request(`http://127.0.0.1:${port}/big`, { maxResponseBytes: 100 });
    expect(response).toMatchObject({ truncated: true });
    expect(response.body.length).toBe(100);
  });

  it('reports a refused connection as a retryable TOOL_ERROR', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const freePort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const http = createToolHttp(new Egress({ allow: '127.0.0.1' }), signal);
    await expect(http.request(`http://127.0.0.1:${freePort}/`)).rejects.toMatchObject({ code: 'TOOL_ERROR', retryable: true });
  });
});

describe('ToolError.fromResponse', () => {
  it.each([
    [503, { 'retry-after': '7' }, true, 7],
    [429, {}, true, undefined],
    [500, {}, true, undefined],
    [404, { 'retry-after': '7' }, false, undefined],
  ])('status %s', (status, headers, retryable, retryAfter) => {
    const err = ToolError.fromResponse('github', { status, headers: headers as Record<string, string> });
    expect(err).toMatchObject({ retryable, retryAfter, details: { upstream: { service: 'github', status } } });
  });
});

describe('EgressPool', () => {
  it('shares one Egress per settings and closes every dispatcher it made', async () => {
    const pool = new EgressPool();
    const loopback = pool.for({ allow: '127.0.0.0/8' });
    expect(pool.for({ allow: '127.0.0.0/8' })).toBe(loopback);
    const other = pool.for({ allow: '127.0.0.0/8', dnsServers: ['127.0.0.1:53'] });
    expect(other).not.toBe(loopback);
    await pool.close();
    // A closed dispatcher refuses new requests.
    await expect(loopback.dispatcher.request({ origin: 'http://127.0.0.1:9', path: '/', method: 'GET' })).rejects.toThrow(/closed|destroyed/i);
    await expect(other.dispatcher.request({ origin: 'http://127.0.0.1:9', path: '/', method: 'GET' })).rejects.toThrow(/closed|destroyed/i);
    expect(pool.for({ allow: '127.0.0.0/8' })).not.toBe(loopback);
    await pool.close();
  });
});
