import { X509Certificate } from 'node:crypto';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { createSecureContext, createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { runTool, toolFailure } from '@tos/sdk/testing';
import { freePort } from '../../../test/support/free-port';
import { DAY_MS, makeCertificate, type KeyedCertificate } from '../../../test/support/netmon/certificates';
import { TlsCertCheckTool } from './tls-cert-check.tool';

/** Every connection the test servers accepted, destroyed at the end so close() returns. */
const accepted = new Set<Socket>();
const listen = (server: TcpServer): Promise<number> => {
  server.on('connection', (socket: Socket) => accepted.add(socket.once('close', () => accepted.delete(socket))));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
};
const daysUntil = (pem: string) => Math.floor((Date.parse(new X509Certificate(pem).validTo) - Date.now()) / DAY_MS);

describe('tls-cert-check', () => {
  let ca: KeyedCertificate;
  const leaves: Record<string, KeyedCertificate> = {};
  let tlsServer: TlsServer;
  let port: number;
  /** Serves the RSA-1024 leaf alone (an RSA context swapped in by SNI for an EC default is not served). */
  let weakServer: TlsServer;
  let weakPort: number;
  /** Accepts TCP and never answers the handshake. */
  let silent: TcpServer;
  let silentPort: number;
  /** Speaks plain TCP (not TLS). */
  let plain: TcpServer;
  let plainPort: number;

  beforeAll(async () => {
    ca = await makeCertificate({ name: 'Netmon Test Root CA', isCa: true });
    const now = Date.now();
    leaves['valid.tls.test'] = await makeCertificate({ name: 'valid.tls.test', ipAddresses: ['127.0.0.1'], issuer: ca, notAfter: new Date(now + 90 * DAY_MS) });
    leaves['expired.tls.test'] = await makeCertificate({ name: 'expired.tls.test', issuer: ca, notBefore: new Date(now - 400 * DAY_MS), notAfter: new Date(now - 10 * DAY_MS) });
    leaves['future.tls.test'] = await makeCertificate({ name: 'future.tls.test', issuer: ca, notBefore: new Date(now + 5 * DAY_MS), notAfter: new Date(now + 95 * DAY_MS) });
    leaves['soon.tls.test'] = await makeCertificate({ name: 'soon.tls.test', issuer: ca, notAfter: new Date(now + 5 * DAY_MS + 3_600_000) });
    leaves['self.tls.test'] = await makeCertificate({ name: 'self.tls.test' });
    leaves['wild.tls.test'] = await makeCertificate({ name: '*.wild.tls.test', issuer: ca });
    const contexts = new Map(Object.entries(leaves).map(([name, leaf]) => [name, createSecureContext({ cert: leaf.cert, key: leaf.key })]));
    // One server, the certificate chosen by SNI (anything else, or no SNI, gets the valid leaf).
    tlsServer = createTlsServer({ cert: leaves['valid.tls.test'].cert, key: leaves['valid.tls.test'].key, SNICallback: (name, done) => done(null, contexts.get(name.endsWith('.wild.tls.test') ? 'wild.tls.test' : name) ?? contexts.get('valid.tls.test')!) });
    port = await listen(tlsServer);
    const weak = await makeCertificate({ name: 'weak.tls.test', issuer: ca, rsaBits: 1024 });
    weakServer = createTlsServer({ cert: weak.cert, key: weak.key });
    weakPort = await listen(weakServer);
    silent = createTcpServer();
    silentPort = await listen(silent);
    plain = createTcpServer((socket) => socket.end('220 hello, this is not TLS\r\n'));
    plainPort = await listen(plain);
  });
  afterAll(async () => {
    accepted.forEach((socket) => socket.destroy());
    await Promise.all([tlsServer, weakServer, silent, plain].map((server) => server && new Promise((resolve) => server.close(resolve))));
  });

  const check = (input: Record<string, unknown>, trustCa = true) => runTool(TlsCertCheckTool, { host: '127.0.0.1', port, ...input }, trustCa ? { tlsCa: ca.cert } : {});

  it('reports a valid certificate, its chain up to the trusted root, protocol and cipher', async () => {
    const out = await check({ servername: 'valid.tls.test' });
    const leaf = new X509Certificate(leaves['valid.tls.test'].cert);
    expect(out).toEqual({
      host: '127.0.0.1',
      port,
      servername: 'valid.tls.test',
      valid: true,
      flags: [],
      days_left: 89,
      name_matches: true,
      trusted: true,
      trust_error: null,
      protocol: 'TLSv1.3',
      cipher: 'TLS_AES_256_GCM_SHA384',
      certificate: {
        subject: 'CN=valid.tls.test',
        issuer: 'CN=Netmon Test Root CA',
        valid_from: new Date(leaf.validFrom).toISOString(),
        valid_to: new Date(leaf.validTo).toISOString(),
        days_left: 89,
        key_type: 'ec',
        key_bits: 256,
        self_signed: false,
        is_ca: false,
        dns_names: ['valid.tls.test'],
        ip_addresses: ['127.0.0.1'],
        serial_number: leaf.serialNumber.toLowerCase(),
        fingerprint_sha256: leaf.fingerprint256.replaceAll(':', '').toLowerCase(),
      },
      chain: [
        {
          subject: 'CN=Netmon Test Root CA',
          issuer: 'CN=Netmon Test Root CA',
          valid_to: new Date(new X509Certificate(ca.cert).validTo).toISOString(),
          days_left: daysUntil(ca.cert),
          key_type: 'ec',
          key_bits: 256,
          self_signed: true,
          is_ca: true,
        },
      ],
    });
  });

  it('matches an IP address against the IP SANs when no name is given (no SNI sent)', async () => {
    await expect(check({})).resolves.toMatchObject({ servername: '127.0.0.1', name_matches: true, valid: true, certificate: { subject: 'CN=valid.tls.test' } });
  });

  it('matches a wildcard certificate', async () => {
    await expect(check({ servername: 'shop.wild.tls.test' })).resolves.toMatchObject({ name_matches: true, valid: true, certificate: { dns_names: ['*.wild.tls.test'] } });
  });

  describe('bad certificates are results with flags', () => {
    it('expired', async () => {
      const out = await check({ servername: 'expired.tls.test' });
      expect(out).toMatchObject({ valid: false, flags: ['expired', 'untrusted'], trusted: false, trust_error: 'CERT_HAS_EXPIRED', name_matches: true, days_left: daysUntil(leaves['expired.tls.test'].cert) });
      expect(out.days_left).toBeLessThan(-9);
    });

    it('not yet valid', async () => {
      await expect(check({ servername: 'future.tls.test' })).resolves.toMatchObject({ valid: false, flags: ['not_yet_valid', 'untrusted'], trust_error: 'CERT_NOT_YET_VALID' });
    });

    it('expiring soon, still valid', async () => {
      await expect(check({ servername: 'soon.tls.test', warn_days: 14 })).resolves.toMatchObject({ valid: true, flags: ['expires_soon'], days_left: 5 });
      await expect(check({ servername: 'soon.tls.test', warn_days: 5 })).resolves.toMatchObject({ valid: true, flags: [] });
    });

    it('self-signed', async () => {
      await expect(check({ servername: 'self.tls.test' })).resolves.toMatchObject({
        valid: false,
        flags: ['self_signed', 'untrusted'],
        trust_error: 'DEPTH_ZERO_SELF_SIGNED_CERT',
        certificate: { subject: 'CN=self.tls.test', issuer: 'CN=self.tls.test', self_signed: true },
        chain: [],
      });
    });

    it('a name the certificate is not for', async () => {
      await expect(check({ servername: 'other.tls.test' })).resolves.toMatchObject({ valid: false, flags: ['name_mismatch'], trusted: true, name_matches: false, certificate: { subject: 'CN=valid.tls.test' } });
    });

    it('a weak key', async () => {
      await expect(check({ port: weakPort, servername: 'weak.tls.test' })).resolves.toMatchObject({ valid: false, flags: ['weak_key'], certificate: { key_type: 'rsa', key_bits: 1024 } });
    });

    it('a CA the service does not trust', async () => {
      await expect(check({ servername: 'valid.tls.test' }, false)).resolves.toMatchObject({
        valid: false,
        flags: ['untrusted'],
        trusted: false,
        trust_error: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
        chain: [],
      });
    });
  });

  describe('bad input', () => {
    it.each([
      ['host', { host: 'bad host' }],
      ['port', { port: 0 }],
      ['servername', { servername: 'a/b' }],
      ['warn_days', { warn_days: 1000 }],
    ])('refuses a bad %s', async (parameter, input) => {
      const err = await toolFailure(check(input));
      expect(err).toMatchObject({ code: 'INVALID_INPUT', details: { parameter } });
    });
  });

  describe('a server that cannot be checked', () => {
    it('is a retryable error when nothing listens', async () => {
      const closed = await freePort();
      const err = await toolFailure(check({ port: closed }));
      expect(err).toMatchObject({ code: 'TOOL_ERROR', retryable: true, details: { target: `127.0.0.1:${closed}`, error: 'ECONNREFUSED' } });
    });

    it('is a lasting error when the port does not speak TLS', async () => {
      const err = await toolFailure(check({ port: plainPort }));
      expect(err).toMatchObject({ code: 'TOOL_ERROR', retryable: false, details: { target: `127.0.0.1:${plainPort}`, error: 'ERR_SSL_WRONG_VERSION_NUMBER' } });
      expect(err.message).toBe(`127.0.0.1:${plainPort} did not complete a TLS handshake (ERR_SSL_WRONG_VERSION_NUMBER)`);
    });

    it('times out on a server that never completes the handshake', async () => {
      const err = await toolFailure(check({ port: silentPort, timeout_ms: 200 }));
      expect(err).toMatchObject({ code: 'TOOL_ERROR', retryable: true, details: { error: 'ETIMEDOUT' } });
    });
  });

  it('stops at once when cancelled mid-handshake', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled by the test');
    setTimeout(() => controller.abort(reason), 150);
    const started = Date.now();
    await expect(runTool(TlsCertCheckTool, { host: '127.0.0.1', port: silentPort, timeout_ms: 20_000 }, { signal: controller.signal })).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('refuses a loopback target through the egress policy when it is not allowed', async () => {
    const err = await toolFailure(runTool(TlsCertCheckTool, { host: '127.0.0.1', port }, { egressAllow: '' }));
    expect(err).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'host', expected: 'a public address' } });
  });
});
