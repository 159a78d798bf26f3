import { request, type Dispatcher } from 'undici';
import type { DeliveryAttempt } from './webhook-delivery.entity';
import type { SignedRequest } from './webhook-signing';

/** Bytes of an answer's body read at most; the rest is not read. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
/** Characters of the body kept in the delivery log. */
const EXCERPT_CHARS = 1024;

export interface SendOutcome {
  attempt: DeliveryAttempt;
  /** Seconds the endpoint asked to wait (`Retry-After`), when it did. */
  retryAfterSeconds: number | null;
}

/**
 * One POST of a delivery through the egress dispatcher (every address it connects to is checked
 * against the egress policy at connect time), no redirect followed (undici's `request` follows
 * none without its redirect interceptor), `timeoutMs` for the whole
 * attempt, at most MAX_RESPONSE_BYTES of the answer read.
 */
export async function sendDelivery(url: string, signed: SignedRequest, dispatcher: Dispatcher, timeoutMs: number, now: () => number = Date.now): Promise<SendOutcome> {
  const started = now();
  const at = new Date(started).toISOString();
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const answer = await request(url, { method: 'POST', headers: { ...signed.headers, 'user-agent': 'tos-webhooks/1' }, body: signed.body, dispatcher, signal });
    const excerpt = await readBounded(answer.body);
    return {
      attempt: { at, status_code: answer.statusCode, latency_ms: now() - started, error: null, response_excerpt: excerpt },
      retryAfterSeconds: retryAfter(answer.headers['retry-after'], now()),
    };
  } catch (err) {
    const error = signal.aborted ? `no answer within ${timeoutMs} ms` : describe(err as Error);
    return { attempt: { at, status_code: null, latency_ms: now() - started, error, response_excerpt: null }, retryAfterSeconds: null };
  }
}

async function readBounded(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size >= MAX_RESPONSE_BYTES) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString('utf8').slice(0, EXCERPT_CHARS);
}

/** `Retry-After` in seconds (a number, or an HTTP date), or null. */
function retryAfter(header: string | string[] | undefined, now: number): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, (date - now) / 1000);
}

/** The error's message with its cause's (undici wraps the egress refusal and connection errors). */
function describe(err: Error): string {
  const cause = (err as Error & { cause?: Error }).cause;
  return cause?.message && cause.message !== err.message ? `${err.message}: ${cause.message}` : err.message;
}
