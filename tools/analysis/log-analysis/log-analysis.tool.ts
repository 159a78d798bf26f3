import { stat } from 'node:fs/promises';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { exactlyOneOf, Tool, type TextSource, type ToolContext, type ToolHandler, textSource, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';
import { FORMATS, LEVELS, parseLine, type ParsedLine } from './entries';
import { LogStats, MAX_ANOMALIES, SPIKE_FACTOR, SPIKE_MIN_ERRORS } from './stats';
import { placeInTime, type Reference } from './years';

const MAX_FILE_BYTES = 20 * 1024 * 1024;
/** Lines between cancellation checkpoints (which also yield to the event loop). */
const CHUNK_LINES = 5_000;

type LogAnalysisInput = ToolInput<typeof definition>;
export type LogAnalysisOutput = ToolOutput<typeof definition>;

const isoOrNull = { type: ['string', 'null'] } as const;
const countsOf = <const K extends string>(keys: readonly K[]) =>
  ({ type: 'object', properties: Object.fromEntries(keys.map((key) => [key, { type: 'integer' }])) as Record<K, { readonly type: 'integer' }>, additionalProperties: false }) as const;

const definition = defineTool({
  id: 'log-analysis',
  name: 'Log Analysis',
  category: 'analysis',
  description:
    "Parses JSON-lines, logfmt, access-log and plain logs — syslog (RFC 3164 and 5424), Android logcat, klog, Windows CBS and Event Viewer text, log4j, Python logging, Apache and nginx error logs, HDFS/Hadoop/Spark/ZooKeeper lines, Kubernetes (klog JSON, container json-file) and journald JSON — maps their levels onto one scale, counts them, groups errors by message template and flags anomalies. Timestamps in their common shapes; a yearless one (syslog, logcat) gets the latest year that puts it no more than a day after the log's latest dated line, else the file's modification time, else the call's time, and a warning says so.",
  status: 'ready',
  version: '1.0.0',
  cacheable: true,
  timeout: 60,
  rate_limit: 100,
  input: {
    type: 'object',
    properties: {
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
    ...exactlyOneOf('content', 'path'),
  },
  output: {
    type: 'object',
    properties: {
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
        type: ['object', 'null'],
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
      warnings: { type: 'array', items: { type: 'string' }, description: 'How times were read where the log leaves them open: the year given to yearless timestamps, and from what.' },
    },
    required: ['total_lines', 'parsed_lines', 'formats', 'levels', 'error_groups', 'time_range', 'anomalies', 'truncated', 'warnings'],
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
        warnings: [],
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
        warnings: [],
      },
    },
  ],
});

@Tool(definition)
export class LogAnalysisTool implements ToolHandler<typeof definition> {
  async execute(input: LogAnalysisInput, ctx: ToolContext<typeof definition>): Promise<LogAnalysisOutput> {
    const source = textSource(input);
    ctx.signal.throwIfAborted();
    const text = source.kind === 'content' ? source.content : await ctx.workspace.readText(source.path, MAX_FILE_BYTES, 'path');

    const lines = text.split(/\r?\n/);
    if (lines[lines.length - 1] === '') lines.pop(); // a final newline ends the last line, it adds none

    const parsed: ParsedLine[] = [];
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
      if (entry) parsed.push(entry);
    }
    // Yearless times are placed once the whole log is read: its latest dated line is their reference.
    const { entries, warnings } = await placeInTime(parsed, () => writtenBy(source, ctx));
    const stats = new LogStats();
    for (const entry of entries) stats.add(entry);
    return { ...stats.summary(lines.length, input.max_groups), warnings };
  }
}

/** When the log was written at the latest, for yearless times: a file's modification time, else now (inline text was just sent). */
async function writtenBy(source: TextSource, ctx: ToolContext): Promise<Reference> {
  if (source.kind === 'content') return { time: Date.now(), source: 'the time of the call (inline content carries no date)' };
  const { mtimeMs } = await stat(await ctx.workspace.resolve(source.path, 'path'));
  return { time: mtimeMs, source: "the file's modification time" };
}
