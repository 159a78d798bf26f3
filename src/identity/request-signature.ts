/**
 * Signed requests (docs/API.md#signed-requests): the exact bytes a client signs, shared by the
 * service that checks them and the `tos` client that makes them.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from '../common/ids';

/** A signature is accepted this long either side of the service's clock, and remembered (replays) for twice that. */
export const SIGNATURE_WINDOW_SECONDS = 300;
export const TIMESTAMP_HEADER = 'x-timestamp';
export const SIGNATURE_HEADER = 'x-signature';

/** `sk_sig_` + 32 base62 characters; never a bearer key (docs/API.md#signed-requests). */
export const SIGNING_SECRET_PATTERN = /^sk_sig_[0-9A-Za-z]{32}$/;

export function generateSigningSecret(): string {
  return `sk_sig_${randomBase62(32)}`;
}

export interface SignedParts {
  /** Unix seconds, as sent in X-Timestamp. */
  timestamp: string;
  method: string;
  /** The request target as sent: path and query string, e.g. `/v1/tools?limit=5`. */
  pathWithQuery: string;
  /** The body bytes as sent (after any Content-Encoding is undone); empty when there is none. */
  body: Buffer | string;
}

/**
 * `<timestamp>.<METHOD> <path-with-query>\n<body>`: the HMAC input, as bytes. The issue's
 * `timestamp.method path body`, with a space and a newline where neither can occur in a request
 * target, so no path and body can be shifted into each other under one signature.
 */
export function signedBytes({ timestamp, method, pathWithQuery, body }: SignedParts): Buffer {
  return Buffer.concat([Buffer.from(`${timestamp}.${method.toUpperCase()} ${pathWithQuery}\n`, 'utf8'), typeof body === 'string' ? Buffer.from(body, 'utf8') : body]);
}

/** The X-Signature header value: `sha256=` + hex HMAC-SHA-256 keyed with the secret's UTF-8 bytes. */
export function signatureOf(secret: string, parts: SignedParts): string {
  return `sha256=${createHmac('sha256', secret).update(signedBytes(parts)).digest('hex')}`;
}

/** The two headers a signed request carries, stamped now. */
export function signatureHeaders(secret: string, parts: Omit<SignedParts, 'timestamp'>, now = Date.now()): Record<string, string> {
  const timestamp = String(Math.floor(now / 1000));
  return { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: signatureOf(secret, { ...parts, timestamp }) };
}

export type SignatureCheck = { ok: true; signature: string } | { ok: false; reason: 'missing' | 'stale' | 'mismatch'; message: string };

/** Whether the headers sign these parts with this secret within the window; replays are the caller's to catch. */
export function checkSignature(secret: string, headers: { timestamp?: string; signature?: string }, parts: Omit<SignedParts, 'timestamp'>, nowMs = Date.now()): SignatureCheck {
  const { timestamp, signature } = headers;
  if (!timestamp || !signature) {
    return { ok: false, reason: 'missing', message: 'This API key requires signed requests: send X-Timestamp (Unix seconds) and X-Signature (sha256=<hex HMAC>)' };
  }
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'missing', message: 'Malformed X-Timestamp: expected Unix seconds' };
  const skew = Number(timestamp) - Math.floor(nowMs / 1000);
  if (Math.abs(skew) > SIGNATURE_WINDOW_SECONDS) {
    return {
      ok: false,
      reason: 'stale',
      message: `Request timestamp outside the ${SIGNATURE_WINDOW_SECONDS / 60}-minute window: X-Timestamp is ${Math.abs(skew)} s ${skew < 0 ? 'in the past' : 'in the future'} (check the client's clock)`,
    };
  }
  const expected = Buffer.from(signatureOf(secret, { ...parts, timestamp }), 'utf8');
  const given = Buffer.from(signature.trim(), 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, reason: 'mismatch', message: 'Invalid request signature: X-Signature is not the HMAC-SHA-256 of "<timestamp>.<METHOD> <path-with-query>\\n<body>" with this key\'s signing secret' };
  }
  return { ok: true, signature: expected.toString('utf8') };
}
