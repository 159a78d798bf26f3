/**
 * How deliveries are signed (docs/API.md#webhooks, "What is signed"). Pure and free of Nest: the
 * service's sender and `tos listen` (src/cli/client/listen.ts) sign with this one code.
 */
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
/** `whsec_` + base64 of at least 24 bytes (Standard Webhooks allows 24 to 64). */
const SECRET_FORM = /^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/;

/** A new signing secret in the Standard Webhooks form: `whsec_` + base64 of 24 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/** Whether `text` is a secret in the form `newWebhookSecret` makes. */
export function isWebhookSecret(text: string): boolean {
  return SECRET_FORM.test(text);
}

/** The HMAC key a secret stands for: the bytes its base64 part decodes to. */
function keyOf(secret: string): Buffer {
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

export interface SignedRequest {
  body: string;
  headers: Record<string, string>;
}

/**
 * The body and signature headers of one attempt (docs/API.md#webhooks, "What is signed"):
 * `X-Signature` is `sha256=` + hex HMAC-SHA-256 of `<X-Timestamp>.<payload JSON without
 * signature>`; the body is that JSON with `"signature"` added last; `webhook-signature` is
 * Standard Webhooks' `v1,` + base64 HMAC-SHA-256 of `<webhook-id>.<webhook-timestamp>.<body>`.
 * `secrets` newest first: during a rotation's overlap each header carries one signature per secret.
 */
export function signDelivery(id: string, payload: { event: string; timestamp: string; data: unknown }, secrets: readonly string[], now: Date): SignedRequest {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const unsigned = JSON.stringify({ event: payload.event, timestamp: payload.timestamp, data: payload.data });
  const hexSignatures = secrets.map((secret) => `sha256=${createHmac('sha256', keyOf(secret)).update(`${timestamp}.${unsigned}`).digest('hex')}`);
  const body = `${unsigned.slice(0, -1)},"signature":${JSON.stringify(hexSignatures[0])}}`;
  const standard = secrets.map((secret) => `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-signature': hexSignatures.join(' '),
      'x-timestamp': timestamp,
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      'webhook-signature': standard.join(' '),
    },
  };
}
