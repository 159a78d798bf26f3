import type { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';
import { maskApiKeys } from './key-mask';

/** One JSON logger for Fastify and Nest; credentials are redacted wherever they appear. */
export function createRootLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'tool-orchestration-service' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', '*.authorization', 'key', 'secret'], censor: '[REDACTED]' },
    // A key pasted into any other field (a tool input logged on failure, a URL) is masked too.
    hooks: { streamWrite: maskApiKeys },
  });
}

const QUIET_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory']);

/** Nest's LoggerService on top of pino, so framework and application lines share one format. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly pino: Logger) {}

  log(message: unknown, ...rest: unknown[]) {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]) {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]) {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]) {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]) {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]) {
    this.write('fatal', message, rest);
  }

  /** Nest passes the context name last; an object message is merged as structured fields. */
  private write(requested: pino.Level, message: unknown, rest: unknown[]) {
    const context = typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
    // Nest's start-up chatter (one line per module and route) is debug detail, not news.
    const level = requested === 'info' && context && QUIET_CONTEXTS.has(context) ? 'debug' : requested;
    if (!this.pino.isLevelEnabled(level)) return;
    if (message !== null && typeof message === 'object' && !(message instanceof Error)) {
      this.pino[level]({ context, ...(message as Record<string, unknown>) });
    } else if (message instanceof Error) {
      this.pino[level]({ context, err: message }, message.message);
    } else {
      this.pino[level]({ context }, String(message));
    }
  }
}
