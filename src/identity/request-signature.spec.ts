import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { checkSignature, generateSigningSecret, SIGNING_SECRET_PATTERN, signatureOf, signedBytes } from './request-signature';

const SECRET = generateSigningSecret();
const BODY = '{"name":"ci-run","type":"user"}';
const NOW = 1_764_160_000_000;
const TIMESTAMP = String(NOW / 1000);

describe('request signatures', () => {
  it('signs "<timestamp>.<METHOD> <path-with-query>\\n<body>" with HMAC-SHA-256', () => {
    expect(SECRET).toMatch(SIGNING_SECRET_PATTERN);
    const parts = { timestamp: TIMESTAMP, method: 'post', pathWithQuery: '/v1/keys?x=1', body: BODY };
    expect(signedBytes(parts).toString('utf8')).toBe(`${TIMESTAMP}.POST /v1/keys?x=1\n${BODY}`);
    expect(signatureOf(SECRET, parts)).toBe(`sha256=${createHmac('sha256', SECRET).update(`${TIMESTAMP}.POST /v1/keys?x=1\n${BODY}`).digest('hex')}`);
  });

  it("agrees with docs/API.md's openssl example", () => {
    const docs = readFileSync(path.join(__dirname, '..', '..', 'docs', 'API.md'), 'utf8');
    const line = docs.split('\n').find((l) => l.startsWith('SIG=$('));
    expect(line).toBeDefined();
    const hex = execFileSync('bash', ['-c', `${line}\nprintf %s "$SIG"`], { env: { PATH: process.env.PATH, SECRET, BODY, TS: TIMESTAMP }, encoding: 'utf8' });
    expect(`sha256=${hex}`).toBe(signatureOf(SECRET, { timestamp: TIMESTAMP, method: 'POST', pathWithQuery: '/v1/keys', body: BODY }));
  });

  it('shifting bytes between path and body changes what is signed', () => {
    const a = signedBytes({ timestamp: TIMESTAMP, method: 'GET', pathWithQuery: '/v1/a.b', body: 'c' });
    const b = signedBytes({ timestamp: TIMESTAMP, method: 'GET', pathWithQuery: '/v1/a', body: 'b.c' });
    expect(a.equals(b)).toBe(false);
  });

  describe('checkSignature', () => {
    const parts = { method: 'POST', pathWithQuery: '/v1/keys', body: Buffer.from(BODY) };
    const signed = (timestamp = TIMESTAMP) => ({ timestamp, signature: signatureOf(SECRET, { ...parts, timestamp }) });

    it('accepts the signature inside the window, either side', () => {
      expect(checkSignature(SECRET, signed(), parts, NOW)).toEqual({ ok: true, signature: signed().signature });
      expect(checkSignature(SECRET, signed(String(NOW / 1000 - 300)), parts, NOW).ok).toBe(true);
      expect(checkSignature(SECRET, signed(String(NOW / 1000 + 300)), parts, NOW).ok).toBe(true);
    });

    it.each([
      ['no headers', {}, 'missing', /requires signed requests/],
      ['no signature', { timestamp: TIMESTAMP }, 'missing', /requires signed requests/],
      ['a timestamp that is not Unix seconds', { timestamp: '2026-11-26T12:00:00Z', signature: 'sha256=00' }, 'missing', /Malformed X-Timestamp/],
      ['301 s old', signed(String(NOW / 1000 - 301)), 'stale', /5-minute window: X-Timestamp is 301 s in the past/],
      ['301 s ahead', signed(String(NOW / 1000 + 301)), 'stale', /5-minute window: X-Timestamp is 301 s in the future/],
      ['another secret', { timestamp: TIMESTAMP, signature: signatureOf(generateSigningSecret(), { ...parts, timestamp: TIMESTAMP }) }, 'mismatch', /Invalid request signature/],
      ['a signature of another length', { timestamp: TIMESTAMP, signature: 'sha256=abc' }, 'mismatch', /Invalid request signature/],
    ])('refuses %s', (_name, headers, reason, message) => {
      const check = checkSignature(SECRET, headers, parts, NOW);
      expect(check).toMatchObject({ ok: false, reason, message: expect.stringMatching(message) });
    });

    it('refuses another body, path or method under the same signature', () => {
      const headers = signed();
      expect(checkSignature(SECRET, headers, { ...parts, body: Buffer.from(BODY.replace('ci-run', 'ci-rum')) }, NOW).ok).toBe(false);
      expect(checkSignature(SECRET, headers, { ...parts, pathWithQuery: '/v1/keys?limit=1' }, NOW).ok).toBe(false);
      expect(checkSignature(SECRET, headers, { ...parts, method: 'PUT' }, NOW).ok).toBe(false);
    });
  });
});
