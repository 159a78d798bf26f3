import { networkError, parseRetryAfter, ToolError } from '@tos/sdk';

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

/** What a failure is judged against: whether a token was sent, and the forge's origin and the call's signal for connection failures. */
export interface FailureContext {
  hadToken: boolean;
  apiOrigin: string;
  signal: AbortSignal;
}

/**
 * The error a careful client makes of a failed forge call that is not about a named input
 * (404s and 422s are mapped by the caller, who knows which input they concern). A connection
 * that failed goes through the SDK's networkError: a refusal by the egress policy is
 * INVALID_INPUT naming FORGE_API_URL, anything else retryable; a cancelled call its abort reason.
 */
export function forgeError(failure: OctokitFailure, context: FailureContext): unknown {
  const response = failure.response;
  if (!response) return networkError(failure.cause ?? failure, context.apiOrigin, 'FORGE_API_URL', context.signal);
  const { status, headers } = response;
  const said = forgeMessage(failure);
  const limited = rateLimit(status, headers, said);
  if (limited) return limited;
  if (status === 401) {
    return new ToolError(context.hadToken ? `The forge rejected the token (401${said ? ` ${said}` : ''})` : 'The forge requires a token (401)', {
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
