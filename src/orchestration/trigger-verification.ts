import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { randomBase62 } from '../common/ids';
import { newWebhookSecret } from '../webhooks/webhook-signing';
import type { VerificationType } from './trigger.entity';

export type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** The longest delivery id kept for deduplication; a longer one is refused. */
export const MAX_DELIVERY_ID_LENGTH = 200;

/** A new secret for the verification: Standard Webhooks' `whsec_` + base64 form, else 40 base62 characters. */
export function newTriggerSecret(type: VerificationType): string {
  return type === 'standard_webhooks' ? newWebhookSecret() : randomBase62(40);
}

/**
 * Null when the request is signed or authorised by `secret` as `type` says (docs/orchestration.md#verification),
 * else why not. GitHub: `X-Hub-Signature-256`, `sha256=` + hex HMAC-SHA-256 of the raw body;
 * GitLab: `X-Gitlab-Token`, the secret itself; Standard Webhooks: the official library, over the
 * raw body (it also refuses a timestamp more than 5 minutes off); bearer: `Authorization: Bearer <secret>`.
 * Every comparison takes the same time however much of it matches.
 */
export function verificationFailure(type: VerificationType, secret: string, headers: Headers, rawBody: Buffer): string | null {
  switch (type) {
    case 'github': {
      const signature = header(headers, 'x-hub-signature-256');
      if (!signature) return 'The X-Hub-Signature-256 header is missing';
      const expected = `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
      return sameSecret(signature, expected) ? null : 'The X-Hub-Signature-256 signature does not match the body';
    }
    case 'gitlab': {
      const token = header(headers, 'x-gitlab-token');
      if (!token) return 'The X-Gitlab-Token header is missing';
      return sameSecret(token, secret) ? null : 'The X-Gitlab-Token does not match';
    }
    case 'standard_webhooks': {
      const standard = { 'webhook-id': header(headers, 'webhook-id') ?? '', 'webhook-timestamp': header(headers, 'webhook-timestamp') ?? '', 'webhook-signature': header(headers, 'webhook-signature') ?? '' };
      try {
        new Webhook(secret).verify(rawBody, standard, { jsonParse: false });
        return null;
      } catch (err) {
        return `Standard Webhooks verification failed: ${(err as Error).message}`;
      }
    }
    case 'bearer': {
      const authorization = header(headers, 'authorization');
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
      if (!match) return 'The Authorization: Bearer header is missing';
      return sameSecret(match[1], secret) ? null : 'The bearer secret does not match';
    }
  }
}

/** The sender's delivery id, the same on its retries: GitHub's, GitLab's, Standard Webhooks' `webhook-id`, else an `Idempotency-Key`. */
export function deliveryIdOf(headers: Headers): string | null {
  return header(headers, 'x-github-delivery') ?? header(headers, 'x-gitlab-event-uuid') ?? header(headers, 'webhook-id') ?? header(headers, 'idempotency-key') ?? null;
}

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Compares digests, so neither the length nor a matching prefix of the secret shows in the time taken. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}
