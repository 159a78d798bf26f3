import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { exactlyOneOf, Tool, type ToolContext, type ToolHandler, textSource } from '../../src/tools/sdk';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'unknown'] as const;
type Level = (typeof LEVELS)[number];
const FORMATS = ['json', 'logfmt', 'access', 'plain'] as const;
type LogFormat = (typeof FORMATS)[number];

const MAX_FILE_BYTES = 20 * 1024 * 1024;
const MAX_EXAMPLE_CHARS = 500;
/** Only the start of a very long message is mined: enough to tell templates apart. */
const MAX_TEMPLATE_SOURCE_CHARS = 1_000;
const MAX_SIGNATURE_CHARS = 300;
const MAX_ANOMALIES = 50;
/** Lines between cancellation checkpoints (which also yield to the event loop). */
const CHUNK_LINES = 5_000;

/**
 * Error spike rule: among the minutes that have at least one timestamped entry (at least
 * SPIKE_MIN_MINUTES of them), a minute is a spike when its error+fatal count is at least
 * SPIKE_FACTOR times the median per-minute error count and at least SPIKE_MIN_ERRORS.
 */
const SPIKE_MIN_MINUTES = 3;
const SPIKE_FACTOR = 3;
const SPIKE_MIN_ERRORS = 5;

interface LogAnalysisInput {
  content?: string;
  path?: string;
  format: 'auto' | LogFormat;
  max_groups: number;
}

interface ErrorGroup {
  signature: string;
  count: number;
  level: 'error' | 'fatal';
  first_seen: string | null;
  last_seen: string | null;
  example: string;
}

interface Anomaly {
  type: 'error_spike' | 'rare_error';
  description: string;
  minute?: string;
  count: number;
  median?: number;
  signature?: string;
}

interface LogAnalysisOutput {
  total_lines: number;
  parsed_lines: number;
  formats: Record<LogFormat, number>;
  levels: Record<Level, number>;
  error_groups: ErrorGroup[];
  time_range: { start: string; end: string } | null;
  anomalies: Anomaly[];
  truncated: boolean;
}

interface LogEntry {
  format: LogFormat;
  level: Level;
  message: string;
  /** Epoch milliseconds, when the line carries a timestamp. */
  time: number | null;
}

const isoOrNull = { type: ['string', 'null'] };
/** Top-level object outputs cannot list `required` members (the SDK has no field for it). */
const countsOf = (keys: readonly string[]) => ({
  type: 'object' as const,
  properties: Object.fromEntries(keys.map((key) => [key, { type: 'integer' }])),
  additionalProperties: false,
});

@Tool({
  id: 'log-analysis',
  name: 'Log Analysis',
  category: 'analysis',
  description:
    'Parses JSON-lines, logfmt, access-log and plain logs, counts levels, groups errors by message template and flags anomalies.',
  status: 'ready',
  version: '1.0.0',
  cacheable: true,
  timeout: 60,
  rate_limit: 100,
  inputs: {
    content: { type: 'string', maxLength: 1_000_000, description: 'Inline log text; give this or path.' },
    path: { type: 'string', maxLength: 1024, description: 'A log file in the workspace (up to 20 MiB); give this or content.' },
    format: {
      type: 'string',
      enum: ['auto', ...FORMATS],
      default: 'auto',
      description: 'Log format; auto detects it per line.',
    },
    max_groups: {
      type: 'integer',
      minimum: 1,
      maximum: 200,
      default: 20,
      description: 'Maximum number of error groups returned, most frequent first.',
    },
  },
  input_rules: exactlyOneOf('content', 'path'),
  outputs: {
    total_lines: { type: 'integer', description: 'Lines in the log.' },
    parsed_lines: { type: 'integer', description: 'Non-blank lines parsed in the requested (or a detected) format.' },
    formats: { ...countsOf(FORMATS), description: 'Parsed lines per detected format.' },
    levels: { ...countsOf(LEVELS), description: 'Parsed lines per normalised level.' },
    error_groups: {
      type: 'array',
      description: 'Error and fatal messages grouped by template (variable tokens masked as <*>), most frequent first.',
      items: {
        type: 'object',
        required: ['signature', 'count', 'level', 'first_seen', 'last_seen', 'example'],
        additionalProperties: false,
        properties: {
          signature: { type: 'string' },
          count: { type: 'integer' },
          level: { enum: ['error', 'fatal'] },
          first_seen: isoOrNull,
          last_seen: isoOrNull,
          example: { type: 'string' },
        },
      },
    },
    time_range: {
      type: 'object',
      nullable: true,
      description: 'Earliest and latest timestamp in the log (ISO 8601), or null when no line has one.',
      additionalProperties: false,
      properties: { start: { type: 'string' }, end: { type: 'string' } },
    },
    anomalies: {
      type: 'array',
      description: `Error spikes (a minute with at least ${SPIKE_MIN_ERRORS} errors and ${SPIKE_FACTOR}x the median per active minute) and error templates seen only once.`,
      items: {
        type: 'object',
        required: ['type', 'description', 'count'],
        additionalProperties: false,
        properties: {
          type: { enum: ['error_spike', 'rare_error'] },
          description: { type: 'string' },
          minute: { type: 'string' },
          count: { type: 'integer' },
          median: { type: 'number' },
          signature: { type: 'string' },
        },
      },
    },
    truncated: { type: 'boolean', description: `True when error groups were cut to max_groups or anomalies to ${MAX_ANOMALIES}.` },
  },
  examples: [
    {
      name: 'Mixed JSON, plain and logfmt lines',
      input: {
        content: [
          '{"level":"info","time":"2024-05-01T10:00:00Z","msg":"server started on port 8080"}',
          '{"level":"error","time":"2024-05-01T10:00:05Z","msg":"payment 8812 failed for user 42"}',
          '2024-05-01T10:00:07Z ERROR payment 9001 failed for user 7',
          'level=warn ts=2024-05-01T10:00:09Z msg="slow query took 1200ms"',
        ].join('\n'),
      },
      output: {
        total_lines: 4,
        parsed_lines: 4,
        formats: { json: 2, logfmt: 1, access: 0, plain: 1 },
        levels: { trace: 0, debug: 0, info: 1, warn: 1, error: 2, fatal: 0, unknown: 0 },
        error_groups: [
          {
            signature: 'payment <*> failed for user <*>',
            count: 2,
            level: 'error',
            first_seen: '2024-05-01T10:00:05.000Z',
            last_seen: '2024-05-01T10:00:07.000Z',
            example: 'payment 8812 failed for user 42',
          },
        ],
        time_range: { start: '2024-05-01T10:00:00.000Z', end: '2024-05-01T10:00:09.000Z' },
        anomalies: [],
        truncated: false,
      },
    },
    {
      name: 'Combined access log',
      input: {
        format: 'access',
        content: [
          '203.0.113.9 - - [01/May/2024:10:00:00 +0000] "GET /health HTTP/1.1" 200 2 "-" "kube-probe/1.29"',
          '203.0.113.9 - alice [01/May/2024:10:00:01 +0000] "POST /api/orders HTTP/1.1" 503 91 "-" "curl/8.5.0"',
          '198.51.100.4 - - [01/May/2024:12:00:02 +0200] "GET /api/orders/17 HTTP/1.1" 404 0',
        ].join('\n'),
      },
      output: {
        total_lines: 3,
        parsed_lines: 3,
        formats: { json: 0, logfmt: 0, access: 3, plain: 0 },
        levels: { trace: 0, debug: 0, info: 1, warn: 1, error: 1, fatal: 0, unknown: 0 },
        error_groups: [
          {
            signature: 'POST <*> HTTP/<*> <*>',
            count: 1,
            level: 'error',
            first_seen: '2024-05-01T10:00:01.000Z',
            last_seen: '2024-05-01T10:00:01.000Z',
            example: 'POST /api/orders HTTP/1.1 503',
          },
        ],
        time_range: { start: '2024-05-01T10:00:00.000Z', end: '2024-05-01T10:00:02.000Z' },
        anomalies: [
          { type: 'rare_error', description: 'Error seen only once: POST <*> HTTP/<*> <*>', count: 1, signature: 'POST <*> HTTP/<*> <*>' },
        ],
        truncated: false,
      },
    },
  ],
})
export class LogAnalysisTool implements ToolHandler<LogAnalysisInput, LogAnalysisOutput> {
  async execute(input: LogAnalysisInput, ctx: ToolContext): Promise<LogAnalysisOutput> {
    const source = textSource(input);
    ctx.signal.throwIfAborted();
    const text = source.kind === 'content' ? source.content : await ctx.workspace.readText(source.path, MAX_FILE_BYTES, 'path');

    const lines = text.split(/\r?\n/);
    if (lines[lines.length - 1] === '') lines.pop(); // a final newline ends the last line, it adds none

    const stats = new LogStats();
    let nextProgress = 10;
    for (let index = 0; index < lines.length; index++) {
      if (index > 0 && index % CHUNK_LINES === 0) {
        await yieldToEventLoop(); // lets a cancel or timeout abort the signal
        ctx.signal.throwIfAborted();
        const percent = Math.floor((index / lines.length) * 100);
        if (percent >= nextProgress) {
          ctx.progress(percent, `${index} of ${lines.length} lines`);
          nextProgress = percent + 10;
        }
      }
      const entry = parseLine(lines[index], input.format);
      if (entry) stats.add(entry);
    }
    return stats.summary(lines.length, input.max_groups);
  }
}

// ---------------------------------------------------------------- parsing

function parseLine(line: string, format: LogAnalysisInput['format']): LogEntry | null {
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

// ---------------------------------------------------------------- templates

/**
 * Variable parts of a message, masked as `<*>` in this order (earlier rules win). Patterns
 * start only at token boundaries so that they stay linear on long tokens.
 */
const VARIABLE_TOKENS: readonly RegExp[] = [
  /"(?:[^"\\]|\\.)*"|(?<!\w)'(?:[^'\\]|\\.)*'(?!\w)/g, // quoted strings (not apostrophes)
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, // URLs
  /(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g, // emails
  /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, // UUIDs
  /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b/g, // IPv4, with port
  /(?<![\w:])(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}(?![\w:])/gi, // IPv6 (and clock times)
  /(?<![\w/.~-])(?:~|\.{1,2})?(?:\/[\w.~%@+-]+)+\/?/g, // file and URL paths
];
const HEX_ID = /^(?:0x)?[0-9a-f]{8,}$/i;

function templateOf(message: string): string {
  let template = message.slice(0, MAX_TEMPLATE_SOURCE_CHARS);
  for (const pattern of VARIABLE_TOKENS) template = template.replace(pattern, '<*>');
  // Then every remaining word with a digit (numbers, ids, sizes, durations) and hex ids.
  template = template.replace(/[\w.-]+/g, (word) => (/\d/.test(word) || HEX_ID.test(word) ? '<*>' : word));
  return template.replace(/\s+/g, ' ').trim().slice(0, MAX_SIGNATURE_CHARS);
}

// ---------------------------------------------------------------- statistics

interface GroupState {
  count: number;
  level: 'error' | 'fatal';
  first: number | null;
  last: number | null;
  example: string;
}

class LogStats {
  private parsed = 0;
  private readonly formats = zeroCounts(FORMATS);
  private readonly levels = zeroCounts(LEVELS);
  private readonly groups = new Map<string, GroupState>();
  /** Error count per minute (keyed by its start, epoch ms) for every minute with a timestamped entry. */
  private readonly minutes = new Map<number, number>();
  private start: number | null = null;
  private end: number | null = null;

  add(entry: LogEntry): void {
    this.parsed += 1;
    this.formats[entry.format] += 1;
    this.levels[entry.level] += 1;
    const isError = entry.level === 'error' || entry.level === 'fatal';

    if (entry.time !== null) {
      this.start = minOf(this.start, entry.time);
      this.end = maxOf(this.end, entry.time);
      const minute = Math.floor(entry.time / 60_000) * 60_000;
      this.minutes.set(minute, (this.minutes.get(minute) ?? 0) + (isError ? 1 : 0));
    }
    if (isError) this.addError(entry, entry.level === 'fatal' ? 'fatal' : 'error');
  }

  private addError(entry: LogEntry, level: 'error' | 'fatal'): void {
    const signature = templateOf(entry.message);
    const group = this.groups.get(signature);
    if (!group) {
      this.groups.set(signature, { count: 1, level, first: entry.time, last: entry.time, example: entry.message.slice(0, MAX_EXAMPLE_CHARS) });
      return;
    }
    group.count += 1;
    if (level === 'fatal') group.level = 'fatal';
    if (entry.time !== null) {
      group.first = minOf(group.first, entry.time);
      group.last = maxOf(group.last, entry.time);
    }
  }

  summary(totalLines: number, maxGroups: number): LogAnalysisOutput {
    const groups = [...this.groups.entries()]
      .map(([signature, group]): ErrorGroup => ({
        signature,
        count: group.count,
        level: group.level,
        first_seen: toIso(group.first),
        last_seen: toIso(group.last),
        example: group.example,
      }))
      .sort((a, b) => b.count - a.count || compareStrings(a.signature, b.signature));
    const anomalies = [...this.spikes(), ...rareErrors(groups)];
    return {
      total_lines: totalLines,
      parsed_lines: this.parsed,
      formats: this.formats,
      levels: this.levels,
      error_groups: groups.slice(0, maxGroups),
      time_range: this.start === null || this.end === null ? null : { start: isoString(this.start), end: isoString(this.end) },
      anomalies: anomalies.slice(0, MAX_ANOMALIES),
      truncated: groups.length > maxGroups || anomalies.length > MAX_ANOMALIES,
    };
  }

  private spikes(): Anomaly[] {
    if (this.minutes.size < SPIKE_MIN_MINUTES) return [];
    const median = medianOf([...this.minutes.values()]);
    const threshold = Math.max(SPIKE_MIN_ERRORS, SPIKE_FACTOR * median);
    return [...this.minutes.entries()]
      .filter(([, errors]) => errors >= threshold)
      .sort(([a], [b]) => a - b)
      .map(([minute, errors]): Anomaly => ({
        type: 'error_spike',
        description: `${errors} errors in the minute from ${isoString(minute)}, against a median of ${median} per active minute`,
        minute: isoString(minute),
        count: errors,
        median,
      }));
  }
}

function rareErrors(groups: readonly ErrorGroup[]): Anomaly[] {
  return groups
    .filter((group) => group.count === 1)
    .map((group): Anomaly => ({
      type: 'rare_error',
      description: `Error seen only once: ${group.signature}`,
      count: 1,
      signature: group.signature,
    }));
}

function zeroCounts<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;
}

function medianOf(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const minOf = (current: number | null, value: number) => (current === null ? value : Math.min(current, value));
const maxOf = (current: number | null, value: number) => (current === null ? value : Math.max(current, value));
const isoString = (time: number) => new Date(time).toISOString();
const toIso = (time: number | null) => (time === null ? null : isoString(time));

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
