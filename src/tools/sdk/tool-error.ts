export type ToolErrorCode = 'TOOL_ERROR' | 'INVALID_INPUT';

export interface ToolErrorOptions {
  /** TOOL_ERROR (500) by default; INVALID_INPUT (400) when the input is at fault. */
  code?: ToolErrorCode;
  /** True when trying again may succeed (upstream 5xx, network). */
  retryable?: boolean;
  /** For upstream HTTP failures: `details.upstream = { service, status }`. */
  details?: Record<string, unknown>;
  suggestion?: string;
  /** Seconds before a retry may succeed; becomes `retry_after` and Retry-After on a sync answer. */
  retryAfter?: number;
  cause?: unknown;
}

/** The part of an HTTP answer ToolError.fromResponse reads (an HttpResponse or a fetch Response). */
export interface UpstreamResponse {
  status: number;
  headers: Record<string, string> | { get(name: string): string | null };
}

/** The error a tool throws to fail its execution with a message the client sees. */
export class ToolError extends Error {
  readonly code: ToolErrorCode;
  readonly retryable: boolean;
  readonly details?: Record<string, unknown>;
  readonly suggestion?: string;
  readonly retryAfter?: number;

  constructor(message: string, options: ToolErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'ToolError';
    this.code = options.code ?? 'TOOL_ERROR';
    this.retryable = options.retryable ?? false;
    this.details = options.details;
    this.suggestion = options.suggestion;
    this.retryAfter = options.retryAfter;
  }

  /** An INVALID_INPUT error in the shape of docs/API.md#which-400: parameter, expected, received. */
  static invalidInput(parameter: string, expected: string, received?: unknown, message?: string): ToolError {
    return new ToolError(message ?? `Invalid value for parameter '${parameter}': expected ${expected}`, {
      code: 'INVALID_INPUT',
      details: { parameter, expected, ...(received === undefined ? {} : { received }) },
    });
  }

  /**
   * A failed upstream HTTP answer: 5xx and 429 are retryable (with Retry-After passed on as
   * `retryAfter`), other statuses are not. `details.upstream = { service, status }`.
   */
  static fromResponse(service: string, response: UpstreamResponse, message?: string): ToolError {
    const { status } = response;
    const retryable = status >= 500 || status === 429;
    const retryAfter = retryable ? parseRetryAfter(headerOf(response, 'retry-after')) : undefined;
    return new ToolError(message ?? `${service} answered HTTP ${status}`, {
      retryable,
      retryAfter,
      details: { upstream: { service, status } },
    });
  }
}

function headerOf(response: UpstreamResponse, name: string): string | undefined {
  const { headers } = response;
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  return (headers as Record<string, string>)[name];
}

/** Seconds from a Retry-After value (delta-seconds or HTTP date), capped at one hour. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Math.ceil((Date.parse(value) - now) / 1000);
  if (!Number.isFinite(seconds)) return undefined;
  return Math.min(Math.max(seconds, 0), 3600);
}
