import { Injectable } from '@nestjs/common';
import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '../../common/canonical-json';
import { AppException } from '../../common/errors';
import { AppConfig } from '../../config/app-config';

/** How long a caller has to answer a tool's questions: the state it brings back expires then. */
const ROUND_TTL_MS = 60 * 60_000;

/** What a round's state is bound to: the same key calling the same tool (or prompt) with the same input. */
export interface RoundBinding {
  keyId: string;
  /** What was called: a tool's id, or `prompt:<name>`. */
  subject: string;
  input: Record<string, unknown>;
}

interface RoundState {
  /** Digest of the binding. */
  b: string;
  /** The answers so far, by question key. */
  a: Record<string, unknown>;
  /** Expiry, epoch ms. */
  e: number;
}

/**
 * The state a tool's (or prompt's) questions hand the caller (MCP `requestState`, REST `request_state`) and the
 * caller brings back with its answers: the earlier rounds' answers, bound to the key, the tool
 * and the input, with an expiry, under an HMAC the caller cannot forge. Nothing is kept here, so
 * any API process takes the next round. The HMAC key derives from SECRETS_KEY (every process of a
 * deployment shares it); without one it is random per process, which a single embedded process
 * is, and a restart only means the caller answers again.
 */
@Injectable()
export class InputRounds {
  private readonly key: Buffer;

  constructor(config: AppConfig) {
    this.key = config.SECRETS_KEY ? Buffer.from(hkdfSync('sha256', config.SECRETS_KEY, '', 'tos input round state', 32)) : randomBytes(32);
  }

  /** Every answer so far: the earlier rounds' (from the state it brings back) and this round's responses. */
  answersSoFar(binding: RoundBinding, { state, responses }: { state?: string; responses?: Record<string, unknown> }): Record<string, unknown> {
    return { ...(state !== undefined && this.open(binding, state)), ...answersOf(responses) };
  }

  seal(binding: RoundBinding, answers: Record<string, unknown>, now = Date.now()): string {
    const payload = Buffer.from(JSON.stringify({ b: digestOf(binding), a: answers, e: now + ROUND_TTL_MS } satisfies RoundState)).toString('base64url');
    return `${payload}.${this.mac(payload)}`;
  }

  /** The answers a state carries; INVALID_REQUEST when it was altered, expired, or belongs to another call. */
  open(binding: RoundBinding, state: string, now = Date.now()): Record<string, unknown> {
    const [payload, mac, extra] = state.split('.');
    const expected = payload === undefined ? '' : this.mac(payload);
    if (extra !== undefined || mac === undefined || mac.length !== expected.length || !timingSafeEqual(Buffer.from(mac), Buffer.from(expected))) {
      throw refused('it was not issued by this service or was altered');
    }
    const round = JSON.parse(Buffer.from(payload, 'base64url').toString()) as RoundState;
    if (round.b !== digestOf(binding)) throw refused('it belongs to another call (key, tool or input differ)');
    if (round.e < now) throw refused('it expired; call again without it and answer anew');
    return round.a;
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}

/**
 * The answers a caller sent that can be answers: objects, as every input response is, and with
 * `open`, only to those questions. Anything else is left out, so its question comes again.
 */
export function answersOf(responses: Record<string, unknown> | undefined, open?: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(responses ?? {}).filter(([key, value]) => (!open || Object.hasOwn(open, key)) && typeof value === 'object' && value !== null && !Array.isArray(value)),
  );
}

function digestOf({ keyId, subject, input }: RoundBinding): string {
  // `toolId` as the member name: states sealed before prompts could ask stay valid.
  return createHash('sha256').update(canonicalJson({ keyId, toolId: subject, input })).digest('base64url');
}

function refused(why: string): AppException {
  return new AppException('INVALID_REQUEST', `The request state does not hold: ${why}`, { details: { parameter: 'request_state' } });
}
