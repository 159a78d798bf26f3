import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTool } from '@tos/sdk/testing';
import { certificateAuthority } from '../../../test/support/test-ca';
import { HealthCheckTool } from './health-check.tool';

const listen = (server: Server): Promise<number> =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
const close = (server: Server) => {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(resolve));
};

describe('health-check', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'health-check-'));
  const ca = certificateAuthority(dir, { name: 'Health Check Test CA' });
  const seen: Record<string, string | undefined>[] = [];
  const app = createServer((req, res) => {
    seen.push({ authorization: req.headers.authorization });
    if (req.url === '/ok') return void res.end('{"status":"ok","db":"up"}');
    if (req.url === '/down') return void res.writeHead(503, { 'retry-after': '5' }).end('{"status":"down"}');
    if (req.url === '/moved') return void res.writeHead(302, { location: '/ok' }).end();
    if (req.url === '/to-private') return void res.writeHead(302, { location: 'http://10.0.0.1/ok' }).end();
    if (req.url === '/long') return void res.end('a'.repeat(30_000));
    // /hang: never answers.
  });
  const secure = createHttpsServer(ca.issue(['localhost'], { days: 10 }), (_req, res) => res.end('secure ok'));
  let base: string;
  let secureBase: string;

  beforeAll(async () => {
    base = `http://127.0.0.1:${await listen(app)}`;
    secureBase = `https://127.0.0.1:${await listen(secure as unknown as Server)}`;
  });
  afterAll(async () => {
    await close(app);
    await close(secure as unknown as Server);
    rmSync(dir, { recursive: true, force: true });
  });

  describe('HTTP', () => {
    it('is healthy on a 2xx whose body matches, and sends the given headers', async () => {
      const out = await runTool(HealthCheckTool, { target: `${base}/ok`, body_match: '"db":"up"', headers: { Authorization: 'Bearer probe-token' } });
      expect(out).toMatchObject({ healthy: true, protocol: 'http', status: 200, status_matched: true, body_matched: true, redirects: 0, tls: null, reason: null });
      expect(out.latency_ms).toBeGreaterThan(0);
      expect(seen.at(-1)).toEqual({ authorization: 'Bearer probe-token' });
    });

    it('matches a regex, and reports a body that does not match', async () => {
      await expect(runTool(HealthCheckTool, { target: `${base}/ok`, body_match: '"status":\\s*"(ok|degraded)"', body_match_type: 'regex' })).resolves.toMatchObject({ healthy: true, body_matched: true });
      await expect(runTool(HealthCheckTool, { target: `${base}/ok`, body_match: 'maintenance' })).resolves.toMatchObject({
        healthy: false,
        status_matched: true,
        body_matched: false,
        reason: 'the body did not match body_match',
      });
    });

    it('follows redirects, or reports the 3xx when told not to', async () => {
      await expect(runTool(HealthCheckTool, { target: `${base}/moved` })).resolves.toMatchObject({ healthy: true, status: 200, redirects: 1 });
      await expect(runTool(HealthCheckTool, { target: `${base}/moved`, follow_redirects: false })).resolves.toMatchObject({ healthy: false, status: 302, redirects: 0 });
      await expect(runTool(HealthCheckTool, { target: `${base}/moved`, follow_redirects: false, expected_status: 302 })).resolves.toMatchObject({ healthy: true, status: 302 });
    });

    it('reports TLS days left of an HTTPS target whose CA is trusted', async () => {
      const out = await runTool(HealthCheckTool, { target: `${secureBase}/` }, { tlsCa: ca.certificate });
      expect(out).toMatchObject({ healthy: true, protocol: 'https', tls: { days_left: 9, subject: 'localhost', issuer: 'Health Check Test CA' } });
    });
  });

  describe('an unhealthy or unreachable target is a result, not an error', () => {
    it('a 503', async () => {
      await expect(runTool(HealthCheckTool, { target: `${base}/down` })).resolves.toMatchObject({ healthy: false, status: 503, status_matched: false, reason: 'status 503, expected a 2xx' });
    });

    it('a refused connection', async () => {
      const closed = createTcpServer();
      const port = await listen(closed as unknown as Server);
      await new Promise((resolve) => closed.close(resolve));
      const out = await runTool(HealthCheckTool, { target: `http://127.0.0.1:${port}/` });
      expect(out).toMatchObject({ healthy: false, status: null, status_matched: null });
      expect(out.reason).toMatch(/ECONNREFUSED/);
    });

    it('a timeout', async () => {
      const out = await runTool(HealthCheckTool, { target: `${base}/hang`, timeout_ms: 300 });
      expect(out).toMatchObject({ healthy: false, reason: expect.stringMatching(/timed out/) });
      expect(out.latency_ms).toBeGreaterThanOrEqual(250);
    });

    it('an untrusted certificate', async () => {
      const out = await runTool(HealthCheckTool, { target: `${secureBase}/` });
      expect(out).toMatchObject({ healthy: false, tls: null, reason: expect.stringMatching(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|unable to verify/i) });
    });
  });

  describe('TCP', () => {
    it('is healthy when the port accepts, unhealthy when it refuses', async () => {
      const port = Number(new URL(base).port);
      await expect(runTool(HealthCheckTool, { target: `tcp://127.0.0.1:${port}` })).resolves.toMatchObject({ healthy: true, protocol: 'tcp', status: null, reason: null });
      await expect(runTool(HealthCheckTool, { target: 'tcp://127.0.0.1:1' })).resolves.toMatchObject({ healthy: false, reason: expect.stringMatching(/ECONNREFUSED/) });
    });
  });

  describe('bad input', () => {
    it.each([
      [{ target: 'ftp://example.com/' }, 'target'],
      [{ target: 'tcp://127.0.0.1' }, 'target'],
      [{ target: 'tcp://127.0.0.1:80/path' }, 'target'],
      [{ target: 'http://127.0.0.1/', body_match: '(unclosed', body_match_type: 'regex' }, 'body_match'],
      [{ target: 'http://127.0.0.1/', timeout_ms: 60_000 }, 'timeout_ms'],
      [{ target: 'http://127.0.0.1/', headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`x-${i}`, 'v'])) }, 'headers'],
    ])('%j is INVALID_INPUT naming %s', async (input, parameter) => {
      await expect(runTool(HealthCheckTool, input)).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter } });
    });

    it('stops a catastrophic regex instead of stalling the event loop', async () => {
      const started = Date.now();
      await expect(runTool(HealthCheckTool, { target: `${base}/long`, body_match: '^(a+)+$b', body_match_type: 'regex' })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        details: { parameter: 'body_match' },
      });
      expect(Date.now() - started).toBeLessThan(2000);
    });
  });

  describe('egress policy', () => {
    it.each(['http://127.0.0.1:9/', 'http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data', 'tcp://[::1]:22', 'http://2130706433/', 'http://0x7f.1/'])(
      'refuses %s by default as INVALID_INPUT on target',
      async (target) => {
        await expect(runTool(HealthCheckTool, { target }, { egressAllow: '' })).rejects.toMatchObject({
          code: 'INVALID_INPUT',
          details: { parameter: 'target', expected: 'a public address' },
        });
      },
    );

    it('refuses a redirect from an allowed host to a refused one', async () => {
      await expect(runTool(HealthCheckTool, { target: `${base}/to-private` })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'target' } });
    });
  });

  it('stops when cancelled mid-call', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('cancelled')), 200);
    const started = Date.now();
    await expect(runTool(HealthCheckTool, { target: `${base}/hang`, timeout_ms: 30_000 }, { signal: controller.signal })).rejects.toThrow('cancelled');
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
