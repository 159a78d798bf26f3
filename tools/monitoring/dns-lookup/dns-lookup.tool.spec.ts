import { createSocket, type Socket } from 'node:dgram';
import { runTool, toolFailure } from '@tos/sdk/testing';
import { freePort } from '../../../test/support/free-port';
import { findDnsmasq } from '../../../test/support/example-world/world';
import { caaRdata, startDnsmasq, wireName, type Dnsmasq } from '../../../test/support/netmon/dnsmasq';
import { describeWith } from '../../../test/support/prerequisites';
import { DnsLookupTool } from './dns-lookup.tool';

/** A root trust anchor (the real root KSK's DS): a validating dnsmasq then needs signatures nobody here makes. */
const ROOT_TRUST_ANCHOR = '.,20326,8,2,E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D';

describeWith(findDnsmasq(), 'dnsmasq-base')('dns-lookup', () => {
  let zone: Dnsmasq;
  let upstream: Dnsmasq;
  let validating: Dnsmasq;
  let silent: Socket;
  let silentServer: string;

  beforeAll(async () => {
    zone = await startDnsmasq([
      // Authoritative for shop.test: unknown names are NXDOMAIN, known ones without a type NODATA.
      '--local=/shop.test/',
      '--host-record=web.shop.test,127.0.0.80,::1',
      '--cname=www.shop.test,web.shop.test',
      '--mx-host=shop.test,mx1.shop.test,10',
      '--mx-host=shop.test,mx2.shop.test,20',
      '--txt-record=shop.test,v=spf1 mx -all',
      '--txt-record=shop.test,site-verification=abc123',
      '--srv-host=_imaps._tcp.shop.test,mx1.shop.test,993,10,5',
      `--dns-rr=shop.test,2,${wireName('ns1.shop.test')}`,
      `--dns-rr=shop.test,257,${caaRdata(0, 'issue', 'ca.shop.test')}`,
      `--dns-rr=shop.test,257,${caaRdata(128, 'iodef', 'mailto:security@shop.test')}`,
    ]);
    // SERVFAIL from a real resolver: a validating dnsmasq in front of one whose answers are unsigned.
    upstream = await startDnsmasq(['--address=/unsigned.test/127.0.0.5']);
    validating = await startDnsmasq(['--dnssec', `--trust-anchor=${ROOT_TRUST_ANCHOR}`, '--dnssec-check-unsigned', `--server=${upstream.server.replace(':', '#')}`]);
    // A resolver that never answers (for timeouts and cancel).
    silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    silentServer = `127.0.0.1:${silent.address().port}`;
  });
  afterAll(async () => {
    await Promise.all([zone, upstream, validating].map((server) => server?.stop()));
    silent?.close();
  });

  it('reads every record type from the named resolver', async () => {
    const out = await runTool(DnsLookupTool, { name: 'shop.test', types: ['MX', 'TXT', 'NS', 'CAA'], server: zone.server });
    expect(out).toMatchObject({
      name: 'shop.test',
      status: 'NOERROR',
      results: { MX: 'NOERROR', TXT: 'NOERROR', NS: 'NOERROR', CAA: 'NOERROR' },
      server: zone.server,
    });
    expect(sorted(out.records as object[])).toEqual(
      sorted([
        { type: 'MX', value: 'mx1.shop.test', priority: 10 },
        { type: 'MX', value: 'mx2.shop.test', priority: 20 },
        { type: 'TXT', value: 'v=spf1 mx -all' },
        { type: 'TXT', value: 'site-verification=abc123' },
        { type: 'NS', value: 'ns1.shop.test' },
        { type: 'CAA', value: 'ca.shop.test', tag: 'issue', critical: 0 },
        { type: 'CAA', value: 'mailto:security@shop.test', tag: 'iodef', critical: 128 },
      ]),
    );
    expect(out.duration_ms).toBeGreaterThan(0);
  });

  it('follows an alias to its addresses, and reads SRV records', async () => {
    const alias = await runTool(DnsLookupTool, { name: 'www.shop.test', types: ['CNAME', 'A', 'AAAA'], server: zone.server });
    expect(alias.records).toEqual([
      { type: 'CNAME', value: 'web.shop.test' },
      { type: 'A', value: '127.0.0.80', ttl: 0 },
      { type: 'AAAA', value: '::1', ttl: 0 },
    ]);
    const srv = await runTool(DnsLookupTool, { name: '_imaps._tcp.shop.test', types: ['SRV'], server: zone.server });
    expect(srv.records).toEqual([{ type: 'SRV', value: 'mx1.shop.test', priority: 10, weight: 5, port: 993 }]);
  });

  describe('DNS answers that are results, not errors', () => {
    it('NXDOMAIN for a name that does not exist', async () => {
      await expect(runTool(DnsLookupTool, { name: 'gone.shop.test', types: ['A', 'MX'], server: zone.server })).resolves.toMatchObject({
        status: 'NXDOMAIN',
        results: { A: 'NXDOMAIN', MX: 'NXDOMAIN' },
        records: [],
      });
    });

    it('NODATA per type for a name that exists without that type, NOERROR overall', async () => {
      await expect(runTool(DnsLookupTool, { name: 'web.shop.test', types: ['A', 'TXT'], server: zone.server })).resolves.toMatchObject({
        status: 'NOERROR',
        results: { A: 'NOERROR', TXT: 'NODATA' },
        records: [{ type: 'A', value: '127.0.0.80', ttl: 0 }],
      });
    });

    it('SERVFAIL from a validating resolver whose answer does not validate', async () => {
      await expect(runTool(DnsLookupTool, { name: 'www.unsigned.test', types: ['A'], server: validating.server })).resolves.toMatchObject({
        status: 'SERVFAIL',
        results: { A: 'SERVFAIL' },
        records: [],
      });
    });

    it('REFUSED from a resolver that serves no such zone', async () => {
      await expect(runTool(DnsLookupTool, { name: 'example.org', server: zone.server })).resolves.toMatchObject({
        status: 'REFUSED',
        results: { A: 'REFUSED', AAAA: 'REFUSED' },
      });
    });
  });

  describe('bad input', () => {
    it.each([
      ['name', { name: 'bad name!.test' }],
      ['name', { name: `${'a'.repeat(64)}.test` }],
      ['types[0]', { name: 'shop.test', types: ['PTR'] }],
      ['types', { name: 'shop.test', types: [] }],
      ['timeout_ms', { name: 'shop.test', timeout_ms: 60_000 }],
    ])('refuses a bad %s', async (parameter, input) => {
      const err = await toolFailure(runTool(DnsLookupTool, input));
      expect(err).toMatchObject({ code: 'INVALID_INPUT', details: { parameter } });
    });

    it('refuses a server that is not an IP address', async () => {
      const err = await toolFailure(runTool(DnsLookupTool, { name: 'shop.test', server: 'dns.shop.test:53' }));
      expect(err).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'server' } });
    });
  });

  describe('a resolver that cannot be asked', () => {
    it('is a retryable error when nothing listens', async () => {
      const closed = `127.0.0.1:${await freePort()}`;
      const err = await toolFailure(runTool(DnsLookupTool, { name: 'shop.test', server: closed, timeout_ms: 300 }));
      expect(err).toMatchObject({ code: 'TOOL_ERROR', retryable: true, details: { server: closed } });
    });

    it('is a retryable error when it does not answer in time', async () => {
      const err = await toolFailure(runTool(DnsLookupTool, { name: 'shop.test', types: ['A'], server: silentServer, timeout_ms: 150 }));
      expect(err).toMatchObject({ code: 'TOOL_ERROR', retryable: true, details: { server: silentServer, error: 'ETIMEOUT' } });
      expect(err.message).toContain('did not answer in time');
    });
  });

  it('stops waiting at once when cancelled', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled by the test');
    const started = Date.now();
    setTimeout(() => controller.abort(reason), 150);
    await expect(runTool(DnsLookupTool, { name: 'shop.test', server: silentServer, timeout_ms: 5000 }, { signal: controller.signal })).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('refuses a loopback resolver through the egress policy when it is not allowed', async () => {
    const err = await toolFailure(runTool(DnsLookupTool, { name: 'shop.test', server: zone.server }, { egressAllow: '' }));
    expect(err).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'server', expected: 'a public address' } });
  });
});

function sorted<T>(records: T[]): T[] {
  return [...records].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}
