import { parseRetryAfter, ToolError } from '../../../src/tools/sdk';

export const FORGE_SERVICE = 'forge';
/** The longest a forge's message is quoted in an error (it is the forge's text, not ours). */
const MAX_QUOTED = 300;
/** GitHub: without a Retry-After, wait at least a minute after a secondary rate limit. */
const SECONDARY_LIMIT_WAIT_SECONDS = 60;

/** What Octokit throws for an HTTP answer >= 400 (a RequestError) or a failed fetch (status 500, no response). */
export interface OctokitFailure {
  name?: string;
  status?: number;
  message?: string;
  response?: { status: number; headers: Record<string, string | undefined>; data?: unknown };
  cause?: unknown;
}

export function isOctokitFailure(err: unknown): err is OctokitFailure {
  return typeof err === 'object' && err !== null && typeof (err as OctokitFailure).status === 'number';
}

/** The forge's own message (`{ message }` of GitHub's error body), shortened. */
export function forgeMessage(failure: OctokitFailure): string {
  const data = failure.response?.data as { message?: unknown } | string | undefined;
  const message = typeof data === 'object' && data !== null && typeof data.message === 'string' ? data.message : typeof data === 'string' ? data : '';
  return message.length > MAX_QUOTED ? `${message.slice(0, MAX_QUOTED)}…` : message;
}

function upstream(status: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { upstream: { service: FORGE_SERVICE, status }, ...extra };
}

/**
 * The ToolError a careful client makes of a failed forge call that is not about a named input
 * (404s and 422s are mapped by the caller, who knows which input they concern).
 */
export function forgeError(failure: OctokitFailure, hadToken: boolean): ToolError {
  const response = failure.response;
  if (!response) return networkFailure(failure);
  const { status, headers } = response;
  const said = forgeMessage(failure);
  const limited = rateLimit(status, headers, said);
  if (limited) return limited;
  if (status === 401) {
    return new ToolError(hadToken ? `The forge rejected the token (401${said ? ` ${said}` : ''})` : 'The forge requires a token (401)', {
      details: upstream(status),
      suggestion: 'Set your own token with PUT /v1/secrets/FORGE_TOKEN (or `tos secrets set FORGE_TOKEN`), or ask the operator to set FORGE_TOKEN',
    });
  }
  if (status === 403) {
    return new ToolError(`The forge refused the call (403${said ? `: ${said}` : ''})`, {
      details: upstream(status),
      suggestion: 'The token lacks a permission this needs (repository read, pull requests or issues write, actions write), or the repository forbids it',
    });
  }
  const retryable = status >= 500;
  return new ToolError(`The forge answered HTTP ${status}${said ? `: ${said}` : ''}`, {
    retryable,
    retryAfter: retryable ? parseRetryAfter(headers['retry-after']) : undefined,
    details: upstream(status),
  });
}

/**
 * Primary limit: 403 or 429 with `x-ratelimit-remaining: 0`, retry at `x-ratelimit-reset`.
 * Secondary limit: 403 or 429 with `retry-after`, or GitHub's "secondary rate limit" message.
 */
function rateLimit(status: number, headers: Record<string, string | undefined>, said: string): ToolError | null {
  if (status !== 403 && status !== 429) return null;
  const primary = headers['x-ratelimit-remaining'] === '0';
  const secondary = /secondary rate limit/i.test(said);
  let retryAfter = parseRetryAfter(headers['retry-after']);
  if (retryAfter === undefined && primary && headers['x-ratelimit-reset']) {
    retryAfter = parseRetryAfter(String(Math.max(Number(headers['x-ratelimit-reset']) - Math.floor(Date.now() / 1000), 1)));
  }
  if (retryAfter === undefined && (secondary || status === 429)) retryAfter = SECONDARY_LIMIT_WAIT_SECONDS;
  if (retryAfter === undefined) return null;
  const which = primary ? 'rate limit' : 'secondary rate limit';
  return new ToolError(`The forge's ${which} is exhausted; retry in ${retryAfter} s`, {
    retryable: true,
    retryAfter,
    details: upstream(status, {
      rate_limit: {
        kind: primary ? 'primary' : 'secondary',
        ...(headers['x-ratelimit-limit'] && { limit: Number(headers['x-ratelimit-limit']) }),
        ...(headers['x-ratelimit-reset'] && { reset: new Date(Number(headers['x-ratelimit-reset']) * 1000).toISOString() }),
      },
    }),
  });
}

/** The connection failed: refused by the egress policy (the setting's fault), else retryable. */
function networkFailure(failure: OctokitFailure): ToolError {
  const refusal = egressRefusal(failure);
  if (refusal) {
    return new ToolError(`FORGE_API_URL names a ${refusal.label} address (${refusal.address}), which tools may not reach`, {
      code: 'INVALID_INPUT',
      details: { parameter: 'FORGE_API_URL', expected: 'a public address', received: refusal.host },
      suggestion: 'Point FORGE_API_URL at a public host, or ask the operator to add it to EGRESS_ALLOW',
    });
  }
  const code = errorCode(failure);
  return new ToolError(`Could not reach the forge: ${code ?? failure.message ?? 'connection failed'}`, {
    retryable: true,
    details: { upstream: { service: FORGE_SERVICE }, ...(code && { error: code }) },
  });
}

interface EgressRefusal {
  host: string;
  address: string;
  label: string;
}

/** The egress policy's refusal somewhere in the cause chain (fetch wraps it twice). */
function egressRefusal(err: unknown): EgressRefusal | null {
  for (let current = err, depth = 0; current && depth < 6; current = (current as { cause?: unknown }).cause, depth++) {
    if ((current as { code?: unknown }).code === 'EGRESS_REFUSED') return current as EgressRefusal;
  }
  return null;
}

function errorCode(err: unknown): string | undefined {
  for (let current = err, depth = 0; current && depth < 6; current = (current as { cause?: unknown }).cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}
