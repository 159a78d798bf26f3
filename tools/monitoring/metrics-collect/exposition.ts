/**
 * A parser of the Prometheus exposition formats: text 0.0.4 and OpenMetrics 1.0 (HELP, TYPE,
 * UNIT, escapes, timestamps, exemplars, `# EOF`). Strict like Prometheus's own scraper: a line it
 * cannot read is an error naming the line.
 */

export const METRIC_TYPES = ['counter', 'gauge', 'histogram', 'gaugehistogram', 'summary', 'info', 'stateset', 'untyped', 'unknown'] as const;
export type MetricType = (typeof METRIC_TYPES)[number];

export interface MetricFamily {
  name: string;
  type: MetricType;
  help: string | null;
  unit: string | null;
}

export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
  timestamp_ms?: number;
  family: MetricFamily;
}

export class ExpositionError extends Error {
  constructor(
    readonly line: number,
    reason: string,
  ) {
    super(`line ${line}: ${reason}`);
  }
}

/** Sample-name suffixes that belong to a family of another name (histogram buckets, counter totals, …). */
const FAMILY_SUFFIXES = ['_total', '_created', '_bucket', '_count', '_sum', '_gcount', '_gsum', '_info'];
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
/** Sticky: matched at lastIndex, without slicing the line. */
const LABEL_NAME = /[a-zA-Z_][a-zA-Z0-9_]*/y;

/** Lines parsed between two turns of the event loop (about 20 ms of work on the shared machine). */
const LINES_PER_TURN = 4000;

/**
 * Parses in slices of LINES_PER_TURN lines, giving the event loop a turn between them, so a large
 * exposition (16 MiB is about a second of parsing) never stalls the service; a cancel stops it.
 */
export async function parseExposition(text: string, openMetrics: boolean, signal?: AbortSignal): Promise<{ families: MetricFamily[]; samples: MetricSample[] }> {
  const families = new Map<string, MetricFamily>();
  const samples: MetricSample[] = [];
  const familyNamed = (name: string): MetricFamily => {
    let family = families.get(name);
    if (!family) families.set(name, (family = { name, type: openMetrics ? 'unknown' : 'untyped', help: null, unit: null }));
    return family;
  };
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    if (index > 0 && index % LINES_PER_TURN === 0) {
      await new Promise((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
    }
    const line = lines[index].replace(/\r$/, '');
    const number = index + 1;
    if (openMetrics && line === '# EOF') break;
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      readDescriptor(line, number, openMetrics, familyNamed);
      continue;
    }
    const sample = readSample(line, number, openMetrics);
    samples.push({ ...sample, family: families.get(sample.name) ?? declaredFamilyOf(sample.name, families) ?? familyNamed(sample.name) });
  }
  return { families: [...families.values()], samples };
}

function declaredFamilyOf(sampleName: string, families: Map<string, MetricFamily>): MetricFamily | undefined {
  const suffix = FAMILY_SUFFIXES.find((candidate) => sampleName.endsWith(candidate) && families.has(sampleName.slice(0, -candidate.length)));
  return suffix ? families.get(sampleName.slice(0, -suffix.length)) : undefined;
}

/** `# HELP name text`, `# TYPE name type`, `# UNIT name unit`; other comments are ignored. */
function readDescriptor(line: string, number: number, openMetrics: boolean, familyNamed: (name: string) => MetricFamily): void {
  const match = /^#\s+(HELP|TYPE|UNIT)\s+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\s(.*))?$/.exec(line);
  if (!match) {
    if (openMetrics && /^#\s+(HELP|TYPE|UNIT)\b/.test(line)) throw new ExpositionError(number, 'malformed descriptor');
    return;
  }
  const [, keyword, name, rest = ''] = match;
  const family = familyNamed(name);
  if (keyword === 'HELP') family.help = unescape(rest, number, false);
  else if (keyword === 'UNIT') family.unit = rest.trim() || null;
  else {
    const type = rest.trim() as MetricType;
    if (!METRIC_TYPES.includes(type)) throw new ExpositionError(number, `unknown metric type '${rest.trim()}'`);
    family.type = type;
  }
}

function readSample(line: string, number: number, openMetrics: boolean): Omit<MetricSample, 'family'> {
  const name = METRIC_NAME.exec(line)?.[0];
  if (!name) throw new ExpositionError(number, 'expected a metric name');
  let position = name.length;
  const labels: Record<string, string> = {};
  if (line[position] === '{') position = readLabels(line, position + 1, number, labels);
  // Value, optional timestamp; OpenMetrics may add an exemplar after ` # `.
  const [fields] = line.slice(position).split(' # ');
  const tokens = fields.trim().split(/\s+/).filter(Boolean);
  if (tokens.length < 1 || tokens.length > 2) throw new ExpositionError(number, 'expected a value and an optional timestamp');
  const value = parseValue(tokens[0]);
  if (value === undefined) throw new ExpositionError(number, `bad value '${tokens[0]}'`);
  const sample: Omit<MetricSample, 'family'> = { name, labels, value };
  if (tokens[1] !== undefined) {
    const timestamp = Number(tokens[1]);
    if (!Number.isFinite(timestamp)) throw new ExpositionError(number, `bad timestamp '${tokens[1]}'`);
    // Text format: milliseconds; OpenMetrics: seconds with a fraction.
    sample.timestamp_ms = openMetrics ? Math.round(timestamp * 1000) : timestamp;
  }
  return sample;
}

/** Reads `name="value",…}` from `position`; returns the position after `}`. */
function readLabels(line: string, position: number, number: number, labels: Record<string, string>): number {
  for (;;) {
    while (line[position] === ' ') position++;
    if (line[position] === '}') return position + 1;
    LABEL_NAME.lastIndex = position;
    const name = LABEL_NAME.exec(line)?.[0];
    if (!name) throw new ExpositionError(number, 'expected a label name');
    position += name.length;
    while (line[position] === ' ') position++;
    if (line[position] !== '=' || line[position + 1] !== '"') throw new ExpositionError(number, `expected ="…" after label ${name}`);
    const close = closingQuote(line, position + 2);
    if (close < 0) throw new ExpositionError(number, `unterminated value of label ${name}`);
    const raw = line.slice(position + 2, close);
    labels[name] = raw.includes('\\') ? unescape(raw, number, true) : raw;
    position = close + 1;
    while (line[position] === ' ') position++;
    if (line[position] === ',') position++;
    else if (line[position] !== '}') throw new ExpositionError(number, 'expected , or } in labels');
  }
}

/** Index of the `"` that ends a label value starting at `from` (skipping escaped ones), or -1. */
function closingQuote(line: string, from: number): number {
  for (let quote = line.indexOf('"', from); quote >= 0; quote = line.indexOf('"', quote + 1)) {
    let backslashes = 0;
    while (line[quote - 1 - backslashes] === '\\') backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
  return -1;
}

/** Escapes of label values (\\, \", \n) and of HELP text (\\, \n). */
function unescape(raw: string, number: number, quoted: boolean): string {
  return raw.replace(/\\(.?)/g, (escape, next: string) => {
    if (next === '\\') return '\\';
    if (next === 'n') return '\n';
    if (next === '"' && quoted) return '"';
    if (quoted) throw new ExpositionError(number, `bad escape ${escape}`);
    return escape;
  });
}

/** Go's ParseFloat spellings Prometheus accepts: numbers, NaN, ±Inf. */
function parseValue(token: string): number | undefined {
  if (/^[+-]?inf(inity)?$/i.test(token)) return token.startsWith('-') ? -Infinity : Infinity;
  if (/^nan$/i.test(token)) return NaN;
  const value = Number(token);
  return token !== '' && !Number.isNaN(value) ? value : undefined;
}
