import { HttpException } from '@nestjs/common';

/** The error codes of docs/API.md#errors and their usual status. */
export const ERROR_STATUS = {
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  INVALID_REQUEST: 400,
  INVALID_INPUT: 400,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  TOOL_TIMEOUT: 504,
  TOOL_ERROR: 500,
  INTERNAL_ERROR: 500,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
  suggestion?: string;
  support?: string;
  retryable?: boolean;
  retry_after?: number;
}

export interface AppExceptionOptions {
  /** HTTP status when it differs from the code's usual one (413, 415, 410, 503...). */
  status?: number;
  details?: Record<string, unknown>;
  suggestion?: string;
  retryable?: boolean;
  retry_after?: number;
}

/** Every error we answer with on purpose; the global filter renders it as the envelope (docs/API.md#envelope). */
export class AppException extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: AppExceptionOptions = {},
  ) {
    super(message);
    this.name = 'AppException';
    this.status = options.status ?? ERROR_STATUS[code];
  }

  get body(): ErrorBody {
    const { details, suggestion, retryable, retry_after } = this.options;
    return {
      code: this.code,
      message: this.message,
      ...(details && { details }),
      ...(suggestion && { suggestion }),
      retryable: retryable ?? DEFAULT_RETRYABLE.has(this.code),
      ...(retry_after !== undefined && { retry_after }),
    };
  }

  static notFound(what: string, id: string): AppException {
    return new AppException('NOT_FOUND', `${what} not found: ${id}`);
  }

  static invalidRequest(message: string, details?: Record<string, unknown>): AppException {
    return new AppException('INVALID_REQUEST', message, { details });
  }
}

/** Retryable unless said otherwise (docs/API.md#envelope). */
const DEFAULT_RETRYABLE = new Set<ErrorCode>(['RATE_LIMITED', 'TOOL_TIMEOUT', 'INTERNAL_ERROR']);

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'INVALID_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  429: 'RATE_LIMITED',
  504: 'TOOL_TIMEOUT',
};

/** Framework errors (Fastify's parser, Nest's router) in our words; others keep their message. */
const FRAMEWORK_MESSAGES: Record<number, string> = {
  404: 'Route not found',
  413: 'Request body too large: JSON bodies are limited to 1 MiB, workspace uploads to WORKSPACE_MAX_BYTES (50 MiB by default)',
  415: 'Unsupported Content-Type: request bodies must be application/json',
};

/**
 * Maps anything thrown while serving a request to a status and an envelope.
 * `unexpected` is true when the error is a bug to log, not a client mistake.
 */
export function toErrorResponse(error: unknown): { status: number; body: ErrorBody; unexpected: boolean } {
  if (error instanceof AppException) return { status: error.status, body: error.body, unexpected: false };
  const status = error instanceof HttpException ? error.getStatus() : (error as { statusCode?: unknown })?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const message = FRAMEWORK_MESSAGES[status] ?? (error as Error).message ?? 'Bad request';
    const code = CODE_BY_STATUS[status] ?? 'INVALID_REQUEST';
    return { status, body: new AppException(code, message, { status }).body, unexpected: false };
  }
  return {
    status: 500,
    body: new AppException('INTERNAL_ERROR', 'An unexpected error occurred. Retry later; if it persists, contact support with the X-Request-ID.').body,
    unexpected: true,
  };
}
