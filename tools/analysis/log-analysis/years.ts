/**
 * Times for every entry of a log: yearless timestamps (RFC 3164 syslog, logcat, klog) get their
 * year from a reference time — the log's own latest dated line when it has one, else what the
 * caller knows of when the log was written (the file's modification time, or the call's time) —
 * and the result says which (docs/tools.md, log-analysis).
 */
import type { LogEntry, ParsedLine } from './entries';
import { withYear } from './timestamps';

export interface Reference {
  time: number;
  /** How the reference was found, for the warning: "the file's modification time". */
  source: string;
}

export async function placeInTime(lines: readonly ParsedLine[], fallback: () => Promise<Reference>): Promise<{ entries: LogEntry[]; warnings: string[] }> {
  let latestDated: number | null = null;
  let yearless = 0;
  for (const { stamp } of lines) {
    if (stamp === null) continue;
    if ('epoch' in stamp) latestDated = latestDated === null ? stamp.epoch : Math.max(latestDated, stamp.epoch);
    else yearless += 1;
  }
  const reference = yearless === 0 ? null : latestDated !== null ? { time: latestDated, source: "the log's latest dated line" } : await fallback();
  const entries = lines.map(({ stamp, ...line }): LogEntry => ({
    ...line,
    time: stamp === null ? null : 'epoch' in stamp ? stamp.epoch : withYear(stamp.yearless, reference!.time),
  }));
  const warnings = reference
    ? [
        `${yearless} timestamp(s) carry no year (RFC 3164 syslog, Android logcat, klog): each was put in the latest year that places it at most a day after ${new Date(reference.time).toISOString()}, ${reference.source}`,
      ]
    : [];
  return { entries, warnings };
}
