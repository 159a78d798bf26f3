/**
 * Log lines as entries: JSON (pino, bunyan, klog, journald, container runtimes' json-file, …),
 * logfmt, access-log and plain lines (plain.ts: syslog, logcat, Windows, log4j, Python, Apache and
 * nginx error logs, …), auto-detected per line.
 */
import { normaliseLevel, syslogLevel, type Level } from './levels';
import { parsePlain } from './plain';
import { fieldTime, leadingTimestamp, type Stamp } from './timestamps';

export { LEVELS, type Level } from './levels';
export const FORMATS = ['json', 'logfmt', 'access', 'plain'] as const;
export type LogFormat = (typeof FORMATS)[number];

/** A line as read: its time may lack a year until the whole log is read (timestamps.ts, withYear). */
export interface ParsedLine {
  format: LogFormat;
  level: Level;
  message: string;
  stamp: Stamp | null;
}

/** An entry as counted. */
export interface LogEntry {
  format: LogFormat;
  level: Level;
  message: string;
  /** Epoch milliseconds, when the line carries a timestamp. */
  time: number | null;
}

export function parseLine(line: string, format: 'auto' | LogFormat): ParsedLine | null {
  if (line.trim() === '') return null;
  switch (format) {
    case 'json':
      return parseJson(line);
    case 'logfmt':
      return parseLogfmt(line);
    case 'access':
      return parseAccess(line);
    case 'plain':
      return { format: 'plain', ...parsePlain(line) };
    case 'auto':
      return parseJson(line) ?? parseAccess(line) ?? parseLogfmt(line) ?? { format: 'plain', ...parsePlain(line) };
  }
}

/** The first of `keys` the record has (the field names differ between loggers). */
function pick(fields: ReadonlyMap<string, unknown>, keys: readonly string[]): unknown {
  for (const key of keys) if (fields.has(key)) return fields.get(key);
  return undefined;
}

const LEVEL_KEYS = ['level', 'severity', 'lvl', 'loglevel', 'levelname', 'log.level'];
const MESSAGE_KEYS = ['msg', 'message', 'MESSAGE'];
// journald's __REALTIME_TIMESTAMP is in microseconds; Python's JSON formatters write asctime.
const TIME_KEYS = ['time', 'timestamp', 'ts', '@timestamp', '__REALTIME_TIMESTAMP', 'asctime'];

/** A structured record (JSON or logfmt) as an entry; the raw line stands in for a missing message. */
function fromFields(format: LogFormat, fields: ReadonlyMap<string, unknown>, line: string): ParsedLine {
  const message = pick(fields, MESSAGE_KEYS);
  return {
    format,
    level: levelOf(fields),
    message: typeof message === 'string' ? message : line.trim(),
    stamp: fieldTime(pick(fields, TIME_KEYS)),
  };
}

function levelOf(fields: ReadonlyMap<string, unknown>): Level {
  // journald (`journalctl -o json`): PRIORITY is a syslog severity, 0–7.
  if (fields.has('PRIORITY')) return syslogLevel(fields.get('PRIORITY'));
  const named = pick(fields, LEVEL_KEYS);
  if (named !== undefined) return normaliseLevel(named);
  // klog's JSON (Kubernetes components): an error carries `err`, an info line its verbosity `v` (0 is info, more is debug).
  if (fields.has('err')) return 'error';
  const verbosity = Number(fields.get('v'));
  if (fields.has('v') && Number.isInteger(verbosity)) return verbosity === 0 ? 'info' : 'debug';
  return 'unknown';
}

function parseJson(line: string): ParsedLine | null {
  if (!line.trimStart().startsWith('{')) return null;
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return null;
  const fields = new Map(Object.entries(record));
  return containerLine(fields) ?? fromFields('json', fields, line);
}

/**
 * Docker's and Kubernetes' json-file logs (`{"log":"…\n","stream":"stderr","time":"…"}`): the
 * level and message are the logged line's own, read as any line is; the time is the runtime's
 * when the line has none.
 */
function containerLine(fields: ReadonlyMap<string, unknown>): ParsedLine | null {
  const logged = fields.get('log');
  if (typeof logged !== 'string' || !(fields.has('stream') || fields.has('time'))) return null;
  const inner = parseLine(logged.trimEnd(), 'auto');
  const stamp = inner?.stamp ?? fieldTime(fields.get('time'));
  return { format: 'json', level: inner?.level ?? 'unknown', message: inner?.message ?? logged.trim(), stamp };
}

const LOGFMT_PAIR = /([A-Za-z_][\w.\-/@]*)=(?:"((?:[^"\\]|\\.)*)"|([^\s"]*))(?=\s|$)\s*/y;

/** A line made only of key=value pairs (at least two), values optionally double-quoted. */
function parseLogfmt(line: string): ParsedLine | null {
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

function parseAccess(line: string): ParsedLine | null {
  const match = ACCESS_LINE.exec(line);
  if (!match) return null;
  const [, , , , time, request, statusText] = match;
  const status = Number(statusText);
  const found = leadingTimestamp(time);
  return {
    format: 'access',
    level: status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info',
    message: `${request} ${status}`,
    stamp: found?.shape === 'access' ? found.stamp : null,
  };
}
