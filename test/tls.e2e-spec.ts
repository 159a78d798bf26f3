/** docs/operations.md#https-and-http2: with TLS_CERT/TLS_KEY, HTTPS with HTTP/2 by ALPN, HTTP/1.1 fallback, TLS 1.2 at least. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as http2Connect } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { startTestApp, TestApp } from './support/app';

describe('TLS and HTTP/2', () => {
  let dir: string;
  let t: TestApp;
  let port: number;
  let ca: Buffer;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tos-tls-'));
    const [cert, key] = [path.join(dir, 'cert.pem'), path.join(dir, 'key.pem')];
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'ignore' });
    ca = readFileSync(cert);
    t = await startTestApp({ env: { DATA_DIR: path.join(dir, 'data'), TLS_CERT: cert, TLS_KEY: key } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = Number(new URL(await t.app.getUrl()).port);
  });

  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers HTTP/2 negotiated by ALPN', async () => {
    const session = http2Connect(`https://127.0.0.1:${port}`, { ca });
    try {
      const { status, body, alpn } = await new Promise<{ status: number; body: string; alpn: string | undefined }>((resolve, reject) => {
        const req = session.request({ ':path': '/healthz' });
        let body = '';
        let status = 0;
        req.on('response', (headers) => (status = Number(headers[':status'])));
        req.on('data', (chunk) => (body += chunk));
        req.on('end', () => resolve({ status, body, alpn: session.alpnProtocol }));
        req.on('error', reject);
        req.end();
      });
      expect(alpn).toBe('h2');
      expect(status).toBe(200);
      expect(JSON.parse(body)).toEqual({ status: 'ok' });
    } finally {
      session.close();
    }
  });

  it('falls back to HTTP/1.1 for clients without HTTP/2', async () => {
    const { status, version } = await new Promise<{ status: number; version: string }>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', port, path: '/healthz', ca, servername: 'localhost' }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, version: res.httpVersion }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(200);
    expect(version).toBe('1.1');
  });

  it('refuses a TLS 1.1 handshake', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const socket = tlsConnect({ host: '127.0.0.1', port, ca, servername: 'localhost', minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' });
      socket.once('secureConnect', () => {
        resolve(`connected with ${socket.getProtocol()}`);
        socket.destroy();
      });
      socket.once('error', (err) => resolve(`refused: ${err.message}`));
    });
    expect(outcome).toMatch(/^refused/);
  });
});
