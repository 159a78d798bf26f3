/**
 * Timestamps of log lines in their common shapes. A time without a zone is read as UTC, so results
 * do not depend on the server's zone. Shapes without a year (RFC 3164 syslog, Android logcat, klog)
 * give a yearless time, which `withYear` places once the log's reference time is known.
 */

/** A time of year: month 0–11, day of the month, milliseconds into the day. */
export interface YearlessTime {
  month: number;
  day: number;
  msOfDay: number;
}

export type Stamp = { epoch: number } | { yearless: YearlessTime };

export type Shape = 'iso' | 'slashed' | 'short-year' | 'compact' | 'syslog' | 'logcat' | 'apache' | 'day-month-year' | 'us' | 'access';

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const DAY_MS = 86_400_000;

type Fields = { year?: number; month: number; day: number; hours: number; minutes: number; seconds: number; fraction?: string; zone?: string };

/** Each shape: its pattern (anchored at the line's start) and the fields it names. */
const SHAPES: ReadonlyArray<{ shape: Shape; pattern: RegExp; fields(match: RegExpExecArray): Fields }> = [
  {
    // ISO 8601 / RFC 3339, `T` or a space, `.` or `,` (log4j, Python) before the fraction.
    shape: 'iso',
    pattern: /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}:?\d{2})?/i,
    fields: (m) => ({ year: +m[1], month: +m[2] - 1, day: +m[3], hours: +m[4], minutes: +m[5], seconds: +m[6], fraction: m[7], zone: m[8] }),
  },
  {
    // nginx's error log: 2024/05/01 10:00:00
    shape: 'slashed',
    pattern: /^(\d{4})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?/,
    fields: (m) => ({ year: +m[1], month: +m[2] - 1, day: +m[3], hours: +m[4], minutes: +m[5], seconds: +m[6], fraction: m[7] }),
  },
  {
    // Spark's log4j layout: 17/06/09 20:10:40
    shape: 'short-year',
    pattern: /^(\d{2})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?/,
    fields: (m) => ({ year: 2000 + +m[1], month: +m[2] - 1, day: +m[3], hours: +m[4], minutes: +m[5], seconds: +m[6], fraction: m[7] }),
  },
  {
    // HDFS's: 081109 203615
    shape: 'compact',
    pattern: /^(\d{2})(\d{2})(\d{2}) (\d{2})(\d{2})(\d{2})(?=\s)/,
    fields: (m) => ({ year: 2000 + +m[1], month: +m[2] - 1, day: +m[3], hours: +m[4], minutes: +m[5], seconds: +m[6] }),
  },
  {
    // RFC 3164 syslog: `Oct 11 22:14:15` (day padded with a space), no year; some writers add one.
    shape: 'syslog',
    pattern: new RegExp(`^${MONTH} {1,2}(\\d{1,2})(?: (\\d{4}))? (\\d{2}):(\\d{2}):(\\d{2})(?:\\.(\\d+))?(?=\\s|$)`, 'i'),
    fields: (m) => ({ year: m[3] === undefined ? undefined : +m[3], month: monthOf(m[1]), day: +m[2], hours: +m[4], minutes: +m[5], seconds: +m[6], fraction: m[7] }),
  },
  {
    // Android logcat's `03-17 16:13:38.811`, no year.
    shape: 'logcat',
    pattern: /^(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{3})(?=\s)/,
    fields: (m) => ({ month: +m[1] - 1, day: +m[2], hours: +m[3], minutes: +m[4], seconds: +m[5], fraction: m[6] }),
  },
  {
    // Apache's error log (ctime): `Wed Oct 11 14:32:52.123456 2000`
    shape: 'apache',
    pattern: new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} {1,2}(\\d{1,2}) (\\d{2}):(\\d{2}):(\\d{2})(?:\\.(\\d+))? (\\d{4})`, 'i'),
    fields: (m) => ({ year: +m[7], month: monthOf(m[1]), day: +m[2], hours: +m[3], minutes: +m[4], seconds: +m[5], fraction: m[6] }),
  },
  {
    // Tomcat's and java.util.logging's: `01-May-2024 10:00:00.123`
    shape: 'day-month-year',
    pattern: new RegExp(`^(\\d{2})-${MONTH}-(\\d{4}) (\\d{2}):(\\d{2}):(\\d{2})(?:[.,](\\d+))?`, 'i'),
    fields: (m) => ({ year: +m[3], month: monthOf(m[2]), day: +m[1], hours: +m[4], minutes: +m[5], seconds: +m[6], fraction: m[7] }),
  },
  {
    // Windows Event Viewer's text export (US locale): `5/1/2024 10:00:00 AM`
    shape: 'us',
    pattern: /^(\d{1,2})\/(\d{1,2})\/(\d{4}) (\d{1,2}):(\d{2}):(\d{2})(?: ([AP]M))?/i,
    fields: (m) => ({ year: +m[3], month: +m[1] - 1, day: +m[2], hours: twentyFourHour(+m[4], m[7]), minutes: +m[5], seconds: +m[6] }),
  },
  {
    // Access logs: `10/Oct/2000:13:55:36 -0700`
    shape: 'access',
    pattern: new RegExp(`^(\\d{2})\\/${MONTH}\\/(\\d{4}):(\\d{2}):(\\d{2}):(\\d{2}) ([+-]\\d{4})`, 'i'),
    fields: (m) => ({ year: +m[3], month: monthOf(m[2]), day: +m[1], hours: +m[4], minutes: +m[5], seconds: +m[6], zone: m[7] }),
  },
];

/** The timestamp a text starts with (optionally in brackets), its shape, and where it ends (spaces after it included). */
export function leadingTimestamp(text: string): { stamp: Stamp; shape: Shape; end: number } | null {
  const bracketed = text.startsWith('[') ? 1 : 0;
  const body = text.slice(bracketed);
  for (const { shape, pattern, fields } of SHAPES) {
    const match = pattern.exec(body);
    if (!match) continue;
    const stamp = stampOf(fields(match));
    if (!stamp) return null;
    let end = bracketed + match[0].length;
    if (bracketed && text[end] === ']') end += 1;
    while (end < text.length && /\s/.test(text[end])) end += 1;
    return { stamp, shape, end };
  }
  return null;
}

/** A structured record's time: epoch numbers (seconds, milliseconds, microseconds or nanoseconds, told by size) or a whole timestamp string. */
export function fieldTime(value: unknown): Stamp | null {
  if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value)) return fieldTime(Number(value));
  if (typeof value === 'number') return Number.isFinite(value) ? { epoch: Math.round(value < 1e11 ? value * 1000 : value < 1e14 ? value : value < 1e17 ? value / 1e3 : value / 1e6) } : null;
  if (typeof value !== 'string') return null;
  const text = value.trim();
  const found = leadingTimestamp(text);
  return found && found.end === text.length ? found.stamp : null;
}

/**
 * Places a yearless time in the latest year that puts it no more than a day after `reference`
 * (a day of slack for zones and clock skew). A log read up to its reference time thus gets
 * December's lines in the year before January's. Null for a day no year has (30 February).
 */
export function withYear(time: YearlessTime, reference: number): number | null {
  const limit = reference + DAY_MS;
  const latest = new Date(limit).getUTCFullYear();
  // Eight years back reach a leap year for 29 February.
  for (let year = latest; year > latest - 8; year--) {
    const midnight = Date.UTC(year, time.month, time.day);
    if (new Date(midnight).getUTCDate() !== time.day) continue;
    if (midnight + time.msOfDay <= limit) return midnight + time.msOfDay;
  }
  return null;
}

function stampOf({ year, month, day, hours, minutes, seconds, fraction = '0', zone }: Fields): Stamp | null {
  if (month < 0 || month > 11 || day < 1 || day > 31 || hours > 23 || minutes > 59 || seconds > 60) return null;
  const msOfDay = ((hours * 60 + minutes) * 60 + seconds) * 1000 + Number(fraction.padEnd(3, '0').slice(0, 3));
  if (year === undefined) return { yearless: { month, day, msOfDay } };
  const midnight = Date.UTC(year, month, day);
  if (new Date(midnight).getUTCDate() !== day) return null;
  return { epoch: midnight + msOfDay - offsetMs(zone) };
}

/** `Z`, `+02:00`, `-0700` → milliseconds east of UTC; none is UTC. */
function offsetMs(zone: string | undefined): number {
  if (zone === undefined || zone.toUpperCase() === 'Z') return 0;
  const digits = zone.replace(':', '');
  const minutes = Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5));
  return (digits.startsWith('-') ? -1 : 1) * minutes * 60_000;
}

function monthOf(name: string): number {
  return MONTHS.indexOf(name.toLowerCase());
}

function twentyFourHour(hours: number, meridiem: string | undefined): number {
  if (meridiem === undefined) return hours;
  const pm = meridiem.toUpperCase() === 'PM';
  return (hours % 12) + (pm ? 12 : 0);
}
