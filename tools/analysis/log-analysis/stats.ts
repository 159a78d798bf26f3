/** The statistics of a log: counts per format and level, error groups by signature, spikes and rare errors. */
import { compareText } from '@tos/sdk';
import { FORMATS, LEVELS, type Level, type LogEntry, type LogFormat } from './entries';
import type { LogAnalysisOutput } from './log-analysis.tool';
import { templateOf } from './templates';

const MAX_EXAMPLE_CHARS = 500;
export const MAX_ANOMALIES = 50;

/**
 * Error spike rule: among the minutes that have at least one timestamped entry (at least
 * SPIKE_MIN_MINUTES of them), a minute is a spike when its error+fatal count is at least
 * SPIKE_FACTOR times the median per-minute error count and at least SPIKE_MIN_ERRORS.
 */
const SPIKE_MIN_MINUTES = 3;
export const SPIKE_FACTOR = 3;
export const SPIKE_MIN_ERRORS = 5;

export type ErrorGroup = LogAnalysisOutput['error_groups'][number];

export type Anomaly = LogAnalysisOutput['anomalies'][number];


interface GroupState {
  count: number;
  level: 'error' | 'fatal';
  first: number | null;
  last: number | null;
  example: string;
}

export class LogStats {
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

  summary(totalLines: number, maxGroups: number): Omit<LogAnalysisOutput, 'warnings'> {
    const groups = [...this.groups.entries()]
      .map(([signature, group]): ErrorGroup => ({
        signature,
        count: group.count,
        level: group.level,
        first_seen: toIso(group.first),
        last_seen: toIso(group.last),
        example: group.example,
      }))
      .sort((a, b) => b.count - a.count || compareText(a.signature, b.signature));
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
