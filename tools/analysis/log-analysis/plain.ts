/**
 * Plain text lines: the layouts real systems write — RFC 5424 and RFC 3164 syslog, Android logcat,
 * klog (Kubernetes components), Windows (CBS logs and Event Viewer's text export), Python's
 * default layout — and the generic shape most others share (log4j, logback, Python with a time,
 * Apache and nginx error logs, HDFS, Hadoop, Spark, ZooKeeper): an optional leading timestamp,
 * then a level word.
 */
import { LETTER_LEVELS, LEVEL_ALIASES, syslogLevel, type Level } from './levels';
import { leadingTimestamp, type Stamp } from './timestamps';

export interface PlainEntry {
  level: Level;
  message: string;
  stamp: Stamp | null;
}

type Layout = (line: string) => PlainEntry | null;

/** RFC 5424: `<PRI>1 TIMESTAMP HOST APP PROCID MSGID [SD…]|- MSG` */
const SYSLOG_5424 = /^<(\d{1,3})>1 (\S+) \S+ \S+ \S+ \S+ (?:-|(?:\[(?:[^\]\\"]|\\.|"(?:[^"\\]|\\.)*")*\])+)(?: (.*))?$/;
/** RFC 3164's header after its timestamp: `HOST TAG[PID]: ` */
const SYSLOG_HEADER = /^\S+ [^\s:[]+(?:\[\d+\])?: ?/;
/** Windows Event Viewer's text export: `Level<TAB>Date and Time<TAB>Source<TAB>Event ID<TAB>Task Category<TAB>Message` */
const WINDOWS_EXPORT = /^(Information|Warning|Error|Critical|Verbose)\t([^\t]+)\t[^\t]*\t\d+\t[^\t]*\t(.*)$/i;
/** Python logging's default `LEVEL:logger:message`. */
const PYTHON_DEFAULT = /^(DEBUG|INFO|WARNING|ERROR|CRITICAL):[^:\s]*:(.*)$/;
/** logcat `brief`: `D/Tag( 1234): message` (also after a `time` format's timestamp). */
const LOGCAT_BRIEF = /^([VDIWEFA])\/[^(]*\(\s*\d+\):\s?(.*)$/;
/** logcat `threadtime` after its timestamp: `PID TID L Tag: message` (the tag starts at a non-space, so a run of spaces is read once). */
const LOGCAT_THREADTIME = /^\d+\s+\d+\s+([VDIWEFA])\s+(?:[^\s:][^:]*)?:\s?(.*)$/;
/** klog: `Lmmdd hh:mm:ss.uuuuuu threadid file:line] message` — no year. */
const KLOG = /^([IWEF])(\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{6})\s+\d+ [^\]]*\] ?(.*)$/;

const LEVEL_WORDS = Object.keys(LEVEL_ALIASES).join('|');
/**
 * A level word: upper case anywhere (`ERROR`), or in brackets in any case (`[error]`, Apache 2.4's
 * `[core:error]`). A bare lower-case "error" is ordinary prose ("connection error"), not a level.
 */
const PLAIN_LEVEL = new RegExp(`[\\[(<](?:[\\w-]+:)?(${LEVEL_WORDS})[\\])>]|\\b(${LEVEL_WORDS})\\b`, 'gi');
/** Right after a timestamp, a level word in any case is one (Windows CBS's `, Info`, `Warning`). */
const FIRST_WORD_LEVEL = new RegExp(`^[\\s,:|-]*(${LEVEL_WORDS})\\b`, 'i');

const LAYOUTS: readonly Layout[] = [syslog5424, windowsExport, pythonDefault, klog, logcatBrief, timestamped];

export function parsePlain(line: string): PlainEntry {
  for (const layout of LAYOUTS) {
    const entry = layout(line);
    if (entry) return entry;
  }
  return withLevelWord(line.trim(), null);
}

function syslog5424(line: string): PlainEntry | null {
  const match = SYSLOG_5424.exec(line);
  if (!match) return null;
  const found = match[2] === '-' ? null : leadingTimestamp(match[2]);
  return { level: syslogLevel(Number(match[1]) % 8), message: (match[3] ?? '').replace(/^\uFEFF/, '').trim(), stamp: found?.stamp ?? null };
}

function windowsExport(line: string): PlainEntry | null {
  const match = WINDOWS_EXPORT.exec(line);
  if (!match) return null;
  return { level: LEVEL_ALIASES[match[1].toLowerCase()], message: match[3].trim(), stamp: leadingTimestamp(match[2])?.stamp ?? null };
}

function pythonDefault(line: string): PlainEntry | null {
  const match = PYTHON_DEFAULT.exec(line);
  return match && { level: LEVEL_ALIASES[match[1].toLowerCase()], message: match[2].trim(), stamp: null };
}

function klog(line: string): PlainEntry | null {
  const match = KLOG.exec(line);
  if (!match) return null;
  const [, letter, month, day, hours, minutes, seconds, micros, message] = match;
  const msOfDay = ((Number(hours) * 60 + Number(minutes)) * 60 + Number(seconds)) * 1000 + Math.floor(Number(micros) / 1000);
  return { level: LETTER_LEVELS[letter], message: message.trim(), stamp: { yearless: { month: Number(month) - 1, day: Number(day), msOfDay } } };
}

function logcatBrief(line: string): PlainEntry | null {
  const match = LOGCAT_BRIEF.exec(line);
  return match && { level: LETTER_LEVELS[match[1]], message: match[2].trim(), stamp: null };
}

/** A line that starts with a timestamp (after a 3164 `<PRI>`, if any): the level from the PRI, logcat's letter or a level word. */
function timestamped(line: string): PlainEntry | null {
  const pri = /^<(\d{1,3})>/.exec(line);
  const text = pri ? line.slice(pri[0].length) : line;
  const found = leadingTimestamp(text);
  if (!found) return null;
  const rest = text.slice(found.end);
  if (found.shape === 'logcat') {
    const logcat = LOGCAT_THREADTIME.exec(rest) ?? LOGCAT_BRIEF.exec(rest);
    if (logcat) return { level: LETTER_LEVELS[logcat[1]], message: logcat[2].trim(), stamp: found.stamp };
  }
  if (found.shape === 'syslog' || pri) {
    const message = rest.replace(SYSLOG_HEADER, '');
    if (pri) return { level: syslogLevel(Number(pri[1]) % 8), message: message.trim(), stamp: found.stamp };
    return withLevelWord(message, found.stamp);
  }
  const first = FIRST_WORD_LEVEL.exec(rest);
  if (first) return { level: LEVEL_ALIASES[first[1].toLowerCase()], message: cleaned(rest.slice(first[0].length)) || rest.trim(), stamp: found.stamp };
  return withLevelWord(rest, found.stamp);
}

/** The level a word gives, and the message after it (what precedes it is a prefix: host, pid, logger). */
function withLevelWord(text: string, stamp: Stamp | null): PlainEntry {
  for (const match of text.matchAll(PLAIN_LEVEL)) {
    const [whole, bracketed, bare] = match;
    // The regex is case-insensitive for brackets; a bare word only counts in upper case.
    if (bracketed !== undefined || bare === bare.toUpperCase()) {
      const message = cleaned(text.slice(match.index + whole.length));
      return { level: LEVEL_ALIASES[(bracketed ?? bare).toLowerCase()], message: message || text.trim(), stamp };
    }
  }
  return { level: 'unknown', message: text.trim(), stamp };
}

function cleaned(message: string): string {
  return message.replace(/^[\s:|-]+/, '').trim();
}
