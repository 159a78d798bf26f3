/** The tool's one level scale, and how each logger's own levels map onto it. */

export const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'unknown'] as const;
export type Level = (typeof LEVELS)[number];

/** Level names, in any case: loggers' own (log4j, Python, java.util.logging, Windows, Apache's trace1–8) and syslog's. */
export const LEVEL_ALIASES: Readonly<Record<string, Level>> = {
  trace: 'trace',
  verbose: 'trace',
  finest: 'trace',
  finer: 'trace',
  ...Object.fromEntries(Array.from({ length: 8 }, (_, index) => [`trace${index + 1}`, 'trace' as const])),
  debug: 'debug',
  fine: 'debug',
  config: 'debug',
  info: 'info',
  information: 'info',
  informational: 'info',
  notice: 'info',
  warn: 'warn',
  warning: 'warn',
  error: 'error',
  err: 'error',
  severe: 'error',
  fatal: 'fatal',
  panic: 'fatal',
  crit: 'fatal',
  critical: 'fatal',
  alert: 'fatal',
  emerg: 'fatal',
  emergency: 'fatal',
};

/** pino and bunyan numeric levels. */
const NUMERIC_LEVELS: Readonly<Record<number, Level>> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

export function normaliseLevel(value: unknown): Level {
  if (typeof value === 'string' && /^\d+$/.test(value)) return normaliseLevel(Number(value)); // logfmt `level=50`
  if (typeof value === 'number') return NUMERIC_LEVELS[value] ?? 'unknown';
  if (typeof value === 'string') return Object.hasOwn(LEVEL_ALIASES, value.toLowerCase()) ? LEVEL_ALIASES[value.toLowerCase()] : 'unknown';
  return 'unknown';
}

/** Syslog severities 0–7 (RFC 5424 section 6.2.1: emerg, alert, crit, err, warning, notice, info, debug), as syslog PRI and journald's PRIORITY give them. */
const SYSLOG_SEVERITIES: readonly Level[] = ['fatal', 'fatal', 'fatal', 'error', 'warn', 'info', 'info', 'debug'];

export function syslogLevel(severity: unknown): Level {
  const value = typeof severity === 'string' && /^\d$/.test(severity) ? Number(severity) : severity;
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 7 ? SYSLOG_SEVERITIES[value] : 'unknown';
}

/** Android logcat's priority letters (V D I W E F, and A for assert), and klog's (I W E F). */
export const LETTER_LEVELS: Readonly<Record<string, Level>> = { V: 'trace', D: 'debug', I: 'info', W: 'warn', E: 'error', F: 'fatal', A: 'fatal' };
