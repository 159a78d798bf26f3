/** Log lines as entries: JSON (pino, bunyan, …), logfmt, access-log and plain lines, auto-detected per line. */

export const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'unknown'] as const;
export type Level = (typeof LEVELS)[number];
export const FORMATS = ['json', 'logfmt', 'access', 'plain'] as const;
export type LogFormat = (typeof FORMATS)[number];

export interface LogEntry {
  format: LogFormat;
  level: Level;
  message: string;
  /** Epoch milliseconds, when the line carries a timestamp. */
  time: number | null;
}

export function parseLine(line: string, format: 'auto' | LogFormat): LogEntry | null {
  if (line.trim() === '') return null;
  switch (format) {
    case 'json':
      return parseJson(line);
    case 'logfmt':
      return parseLogfmt(line);
    case 'access':
      return parseAccess(line);
    case 'plain':
      return parsePlain(line);
    case 'auto':
      return parseJson(line) ?? parseAccess(line) ?? parseLogfmt(line) ?? parsePlain(line);
  }
}

const LEVEL_ALIASES: Readonly<Record<string, Level>> = {
  trace: 'trace',
  verbose: 'trace',
  debug: 'debug',
  info: 'info',
  information: 'info',
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

function normaliseLevel(value: unknown): Level {
  if (typeof value === 'string' && /^\d+$/.test(value)) return normaliseLevel(Number(value)); // logfmt `level=50`
  if (typeof value === 'number') return NUMERIC_LEVELS[value] ?? 'unknown';
  if (typeof value === 'string') return Object.hasOwn(LEVEL_ALIASES, value.toLowerCase()) ? LEVEL_ALIASES[value.toLowerCase()] : 'unknown';
  return 'unknown';
}

const ISO_TIME = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * ISO 8601 date-times (a missing zone means UTC, so results do not depend on the server's zone)
 * and epoch numbers: below 1e11 they are seconds, above milliseconds.
 */
function parseTime(value: unknown): number | null {
  if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value)) return parseTime(Number(value));
  if (typeof value === 'number') return Number.isFinite(value) ? Math.round(value < 1e11 ? value * 1000 : value) : null;
  if (typeof value !== 'string') return null;
  const match = ISO_TIME.exec(value.trim());
  if (!match) return null;
  const [, date, time, fraction = '0', zone = 'Z'] = match;
  const millis = fraction.padEnd(3, '0').slice(0, 3);
  const offset = zone.toUpperCase() === 'Z' || zone.includes(':') ? zone.toUpperCase() : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const parsed = Date.parse(`${date}T${time}.${millis}${offset}`);
  return Number.isNaN(parsed) ? null : parsed;
}

/** The first of `keys` the record has (the field names differ between loggers). */
function pick(fields: ReadonlyMap<string, unknown>, keys: readonly string[]): unknown {
  for (const key of keys) if (fields.has(key)) return fields.get(key);
  return undefined;
}

const LEVEL_KEYS = ['level', 'severity', 'lvl', 'loglevel'];
const MESSAGE_KEYS = ['msg', 'message'];
const TIME_KEYS = ['time', 'timestamp', 'ts', '@timestamp'];

/** A structured record (JSON or logfmt) as an entry; the raw line stands in for a missing message. */
function fromFields(format: LogFormat, fields: ReadonlyMap<string, unknown>, line: string): LogEntry {
  const message = pick(fields, MESSAGE_KEYS);
  return {
    format,
    level: normaliseLevel(pick(fields, LEVEL_KEYS)),
    message: typeof message === 'string' ? message : line.trim(),
    time: parseTime(pick(fields, TIME_KEYS)),
  };
}

function parseJson(line: string): LogEntry | null {
  if (!line.trimStart().startsWith('{')) return null;
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return null;
  return fromFields('json', new Map(Object.entries(record)), line);
}

const LOGFMT_PAIR = /([A-Za-z_][\w.\-/@]*)=(?:"((?:[^"\\]|\\.)*)"|([^\s"]*))(?=\s|$)\s*/y;

/** A line made only of key=value pairs (at least two), values optionally double-quoted. */
function parseLogfmt(line: string): LogEntry | null {
  const fields = new Map<string, string>();
  const text = line.trim();
  LOGFMT_PAIR.lastIndex = 0;
  while (LOGFMT_PAIR.lastIndex < text.length) {
    const match = LOGFMT_PAIR.exec(text);
    if (!match) return null;
    fields.set(match[1], match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : match[3]);
  }
  return fields.size >= 2 ? fromFields('logfmt', fields, line) : null;
}

/** Common log format, optionally followed by the combined format's referer and user agent. */
const ACCESS_LINE = /^(\S+) (\S+) (\S+) \[([^\]]+)\] "((?:[^"\\]|\\.)*)" (\d{3}) (\d+|-)(?: "(?:[^"\\]|\\.)*" "(?:[^"\\]|\\.)*")?/;
const ACCESS_TIME = /^(\d{2})\/([A-Za-z]{3})\/(\d{4}):(\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/;
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

function parseAccess(line: string): LogEntry | null {
  const match = ACCESS_LINE.exec(line);
  if (!match) return null;
  const [, , , , time, request, statusText] = match;
  const status = Number(statusText);
  return {
    format: 'access',
    level: status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info',
    message: `${request} ${status}`,
    time: parseAccessTime(time),
  };
}

/** `10/Oct/2000:13:55:36 -0700` */
function parseAccessTime(text: string): number | null {
  const match = ACCESS_TIME.exec(text);
  const month = match ? MONTHS.indexOf(match[2].toLowerCase()) : -1;
  if (!match || month < 0) return null;
  const [, day, , year, hours, minutes, seconds, sign, offsetHours, offsetMinutes] = match;
  const local = Date.UTC(Number(year), month, Number(day), Number(hours), Number(minutes), Number(seconds));
  const offset = (Number(offsetHours) * 60 + Number(offsetMinutes)) * 60_000;
  return sign === '+' ? local - offset : local + offset;
}

/** An optional leading ISO timestamp, bracketed or not. */
const PLAIN_TIMESTAMP = /^\[?(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)\]?\s*/i;
const LEVEL_WORDS = Object.keys(LEVEL_ALIASES).join('|');
/**
 * A level word: upper case anywhere (`ERROR`), or in brackets in any case (`[error]`).
 * A bare lower-case "error" is ordinary prose ("connection error"), not a level.
 */
const PLAIN_LEVEL = new RegExp(`[\\[(<](${LEVEL_WORDS})[\\])>]|\\b(${LEVEL_WORDS})\\b`, 'gi');

function parsePlain(line: string): LogEntry {
  const timestamp = PLAIN_TIMESTAMP.exec(line);
  const rest = timestamp ? line.slice(timestamp[0].length) : line.trim();
  const level = findPlainLevel(rest);
  // The message is what follows the level word: what precedes it is a prefix (host, pid, logger).
  const message = level ? rest.slice(level.end).replace(/^[\s:|-]+/, '') : '';
  return {
    format: 'plain',
    level: level?.level ?? 'unknown',
    message: message || rest.trim(),
    time: timestamp ? parseTime(timestamp[1]) : null,
  };
}

function findPlainLevel(text: string): { level: Level; end: number } | null {
  for (const match of text.matchAll(PLAIN_LEVEL)) {
    const [whole, bracketed, bare] = match;
    // The regex is case-insensitive for brackets; a bare word only counts in upper case.
    if (bracketed !== undefined || bare === bare.toUpperCase()) {
      return { level: LEVEL_ALIASES[(bracketed ?? bare).toLowerCase()], end: match.index + whole.length };
    }
  }
  return null;
}
