import type { Stream } from 'node:stream';

/** A line is cut to this many characters, and at most LINES_PER_MINUTE are logged per StderrLog. */
const LINE_CHARS = 500;
const LINES_PER_MINUTE = 60;

/** Where the lines go: each line at `log`, the count of lines dropped over the limit at `warn`. */
export interface StderrSink {
  log(line: string): void;
  warn(line: string): void;
}

/**
 * The stderr of a process the service runs, to the service's log line by line (`[label stderr] …`):
 * each line cut to LINE_CHARS, at most LINES_PER_MINUTE, the given secret values masked. One
 * StderrLog per supervised server, so its budget spans the server's restarts. Raw text on the
 * service's own stderr would break its one JSON log format.
 */
export class StderrLog {
  private window = { from: 0, lines: 0, dropped: 0 };

  constructor(
    private readonly label: string,
    private readonly sink: StderrSink,
  ) {}

  follow(stderr: Stream | null | undefined, secretValues: readonly string[] = []): void {
    const masked = secretValues.filter((value) => value.length >= 4);
    let partial = '';
    stderr?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      // Only a line's head is logged: an endless line is kept to a head long enough to mask secrets in it.
      partial = lines.pop()!.slice(0, LINE_CHARS * 4);
      for (const line of lines) this.line(line, masked);
    });
  }

  private line(raw: string, masked: string[]): void {
    const now = Date.now();
    if (now - this.window.from > 60_000) {
      if (this.window.dropped > 0) this.sink.warn(`${this.label}: ${this.window.dropped} stderr lines not logged (more than ${LINES_PER_MINUTE} a minute)`);
      this.window = { from: now, lines: 0, dropped: 0 };
    }
    if (this.window.lines >= LINES_PER_MINUTE) {
      this.window.dropped += 1;
      return;
    }
    this.window.lines += 1;
    let line = raw.trimEnd();
    for (const value of masked) line = line.split(value).join('[secret]');
    if (line) this.sink.log(`[${this.label} stderr] ${line.length > LINE_CHARS ? `${line.slice(0, LINE_CHARS)}…` : line}`);
  }
}
