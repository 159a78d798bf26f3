import { copyFileSync, mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTool, toolFailure, type RunToolOverrides } from '@tos/sdk/testing';
import { LogAnalysisTool } from './log-analysis.tool';

type Input = Parameters<LogAnalysisTool['execute']>[0];
type Output = Awaited<ReturnType<LogAnalysisTool['execute']>>;

const tool = new LogAnalysisTool();
const fixtures = path.join(__dirname, '../fixtures');
const analyse = (input: Partial<Input>, overrides: RunToolOverrides = {}) => runTool<Output>(tool, input, { workspaceRoot: fixtures, ...overrides });
const lines = (...text: string[]) => text.join('\n');

/** Each fixture of fixtures/logs: the levels its lines carry in their own terms, mapped onto the one scale, and its first and last time. */
const FORMAT_FIXTURES: Array<[file: string, levels: Output['levels'], range: [start: string, end: string]]> = [
  ['syslog-rfc3164.log', { trace: 0, debug: 2, info: 8, warn: 2, error: 4, fatal: 4, unknown: 0 }, ['2025-12-31T23:58:01.000Z', '2026-01-01T00:02:08.000Z']],
  ['syslog-rfc5424.log', { trace: 0, debug: 2, info: 8, warn: 3, error: 3, fatal: 4, unknown: 0 }, ['2024-05-01T08:00:00.003Z', '2024-05-01T08:02:55.753Z']],
  ['android-logcat.log', { trace: 2, debug: 4, info: 6, warn: 2, error: 4, fatal: 2, unknown: 0 }, ['2024-03-17T16:13:38.811Z', '2024-03-17T16:15:58.081Z']],
  ['windows-cbs.log', { trace: 0, debug: 0, info: 12, warn: 4, error: 4, fatal: 0, unknown: 0 }, ['2016-09-28T04:30:30.000Z', '2016-09-28T04:33:40.000Z']],
  ['windows-events.txt', { trace: 2, debug: 0, info: 8, warn: 3, error: 5, fatal: 2, unknown: 0 }, ['2024-05-01T09:58:12.000Z', '2024-05-01T12:27:02.000Z']],
  ['log4j.log', { trace: 2, debug: 3, info: 5, warn: 3, error: 5, fatal: 2, unknown: 0 }, ['2024-05-01T10:00:00.123Z', '2024-05-01T10:01:04.932Z']],
  ['python.log', { trace: 0, debug: 4, info: 7, warn: 3, error: 3, fatal: 3, unknown: 0 }, ['2024-05-01T11:20:00.005Z', '2024-05-01T11:23:38.505Z']],
  ['apache-error.log', { trace: 1, debug: 3, info: 5, warn: 3, error: 3, fatal: 5, unknown: 0 }, ['2024-05-01T14:32:52.123Z', '2024-05-01T14:42:03.000Z']],
  ['nginx-error.log', { trace: 0, debug: 2, info: 5, warn: 3, error: 5, fatal: 5, unknown: 0 }, ['2024-05-01T10:00:00.000Z', '2024-05-01T10:06:01.000Z']],
  ['hdfs.log', { trace: 0, debug: 0, info: 14, warn: 3, error: 3, fatal: 0, unknown: 0 }, ['2008-11-09T20:35:18.000Z', '2008-11-09T20:39:25.000Z']],
  ['hadoop.log', { trace: 0, debug: 0, info: 11, warn: 3, error: 3, fatal: 3, unknown: 0 }, ['2015-10-18T18:01:47.978Z', '2015-10-18T18:02:39.639Z']],
  ['spark.log', { trace: 0, debug: 0, info: 12, warn: 3, error: 5, fatal: 0, unknown: 0 }, ['2017-06-09T20:10:40.000Z', '2017-06-09T20:11:26.000Z']],
  ['zookeeper.log', { trace: 0, debug: 3, info: 10, warn: 4, error: 3, fatal: 0, unknown: 0 }, ['2015-07-29T17:41:44.747Z', '2015-07-29T17:43:20.450Z']],
  ['kubernetes.jsonl', { trace: 0, debug: 5, info: 5, warn: 3, error: 7, fatal: 0, unknown: 0 }, ['2024-05-01T10:00:00.047Z', '2024-05-01T10:02:03.549Z']],
  ['journald.jsonl', { trace: 0, debug: 2, info: 6, warn: 3, error: 3, fatal: 6, unknown: 0 }, ['2024-05-01T10:00:00.123Z', '2024-05-01T10:01:01.878Z']],
  ['klog.log', { trace: 0, debug: 0, info: 11, warn: 3, error: 3, fatal: 3, unknown: 0 }, ['2024-05-01T10:00:00.123Z', '2024-05-01T10:00:44.691Z']],
];

describe('LogAnalysisTool', () => {
  describe('JSON lines', () => {
    it('reads level, message and time under their common names', async () => {
      const result = await analyse({
        format: 'json',
        content: lines(
          '{"severity":"WARNING","timestamp":"2024-05-01T10:00:00.250Z","message":"disk 91% full"}',
          '{"lvl":"err","ts":1714557660000,"msg":"job 7 crashed"}',
          '{"level":60,"time":1714557720,"msg":"giving up"}',
          '{"level":"info","no_message":true}',
          '{"level":"chatty","msg":"odd level"}',
        ),
      });
      expect(result.levels).toEqual({ trace: 0, debug: 0, info: 1, warn: 1, error: 1, fatal: 1, unknown: 1 });
      expect(result.formats.json).toBe(5);
      // epoch ms (1714557660000) and epoch seconds (1714557720) both read as times
      expect(result.time_range).toEqual({ start: '2024-05-01T10:00:00.250Z', end: '2024-05-01T10:02:00.000Z' });
      expect(result.error_groups.map((g) => [g.signature, g.level, g.first_seen])).toEqual([
        ['giving up', 'fatal', '2024-05-01T10:02:00.000Z'],
        ['job <*> crashed', 'error', '2024-05-01T10:01:00.000Z'],
      ]);
    });

    it('uses the raw line as the message when there is none, and skips non-object JSON', async () => {
      const result = await analyse({ format: 'json', content: lines('{"level":"error","code":17}', '[1,2]', 'not json') });
      expect(result).toMatchObject({ total_lines: 3, parsed_lines: 1 });
      expect(result.error_groups[0]).toMatchObject({ signature: '{<*>:<*>,<*>:<*>}', example: '{"level":"error","code":17}' });
    });
  });

  it('parses logfmt, with quoted and escaped values', async () => {
    const result = await analyse({
      format: 'logfmt',
      content: lines(
        'time=2024-05-01T10:00:00Z level=error msg="user \\"bob\\" not found" request_id=ab12',
        'ts=1714557601 lvl=debug msg=tick',
        'ts=1714557601 level=60 msg=halt',
        'just some words',
      ),
    });
    expect(result).toMatchObject({ total_lines: 4, parsed_lines: 3, formats: { logfmt: 3 } });
    expect(result.levels).toMatchObject({ error: 1, debug: 1, fatal: 1 });
    expect(result.error_groups[1]).toMatchObject({ signature: 'user <*> not found', example: 'user "bob" not found' });
    expect(result.time_range).toEqual({ start: '2024-05-01T10:00:00.000Z', end: '2024-05-01T10:00:01.000Z' });
  });

  it('parses common and combined access logs, with the level from the status', async () => {
    const result = await analyse({
      format: 'access',
      content: lines(
        '127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326',
        '127.0.0.1 - - [10/Oct/2000:13:56:00 -0700] "GET /missing HTTP/1.0" 404 - "http://example.com/start.html" "Mozilla/4.08"',
        '10.1.1.1 - - [10/Oct/2000:21:00:00 +0000] "POST /api/pay HTTP/1.1" 502 17 "-" "curl/8.0"',
        '2024-05-01 plain line',
      ),
    });
    expect(result).toMatchObject({ total_lines: 4, parsed_lines: 3, formats: { access: 3 } });
    expect(result.levels).toMatchObject({ info: 1, warn: 1, error: 1 });
    expect(result.time_range).toEqual({ start: '2000-10-10T20:55:36.000Z', end: '2000-10-10T21:00:00.000Z' });
    expect(result.error_groups).toEqual([
      {
        signature: 'POST <*> HTTP/<*> <*>',
        count: 1,
        level: 'error',
        first_seen: '2000-10-10T21:00:00.000Z',
        last_seen: '2000-10-10T21:00:00.000Z',
        example: 'POST /api/pay HTTP/1.1 502',
      },
    ]);
  });

  describe('plain lines', () => {
    it('detects a leading ISO timestamp and upper-case or bracketed level words', async () => {
      const result = await analyse({
        format: 'plain',
        content: lines(
          '2024-05-01T10:00:00Z INFO started',
          '[2024-05-01 10:00:01.5] [error] db timeout after 30s',
          '2024-05-01 12:00:02,000+0200 app[311]: ERROR: db timeout after 45s',
          'WARNING low disk',
          'a connection error happened',
          'TRACE enter handler',
        ),
      });
      expect(result.levels).toEqual({ trace: 1, debug: 0, info: 1, warn: 1, error: 2, fatal: 0, unknown: 1 });
      expect(result.formats.plain).toBe(6);
      expect(result.error_groups).toEqual([
        {
          signature: 'db timeout after <*>',
          count: 2,
          level: 'error',
          first_seen: '2024-05-01T10:00:01.500Z',
          last_seen: '2024-05-01T10:00:02.000Z',
          example: 'db timeout after 30s',
        },
      ]);
    });

    it('reports null times when no line has a timestamp', async () => {
      const result = await analyse({ content: 'ERROR boom 1\nERROR boom 2\n' });
      expect(result.time_range).toBeNull();
      expect(result.error_groups[0]).toMatchObject({ signature: 'boom <*>', count: 2, first_seen: null, last_seen: null });
    });
  });

  describe('the formats real systems write (fixtures/logs: 20 lines each, in each format\'s published layout)', () => {
    let copies: string;
    beforeAll(() => (copies = mkdtempSync(path.join(tmpdir(), 'log-analysis-'))));
    afterAll(() => rmSync(copies, { recursive: true, force: true }));

    /** Yearless logs are read as written by their file's modification time: a copy gets one. */
    const WRITTEN: Readonly<Record<string, string>> = { 'syslog-rfc3164.log': '2026-01-01T12:00:00Z', 'android-logcat.log': '2024-03-18T08:00:00Z', 'klog.log': '2024-05-02T00:00:00Z' };
    const writtenCopy = (file: string) => {
      copyFileSync(path.join(fixtures, 'logs', file), path.join(copies, file));
      utimesSync(path.join(copies, file), new Date(WRITTEN[file]), new Date(WRITTEN[file]));
      return analyse({ path: file }, { workspaceRoot: copies });
    };

    it.each(FORMAT_FIXTURES)('%s: levels on the one scale and the time range', async (file, levels, [start, end]) => {
      let result: Output;
      if (WRITTEN[file]) {
        result = await writtenCopy(file);
        expect(result.warnings).toEqual([expect.stringMatching(/^20 timestamp\(s\) carry no year .* at most a day after .*, the file's modification time$/)]);
      } else {
        result = await analyse({ path: `logs/${file}` });
        expect(result.warnings).toEqual([]);
      }
      expect(result).toMatchObject({ total_lines: 20, parsed_lines: 20 });
      expect(result.levels).toEqual(levels);
      expect(result.time_range).toEqual({ start, end });
    });

    it('puts a yearless time in the latest year no more than a day after the reference: December before January', async () => {
      // The 3164 fixture crosses midnight of 31 December: with the file written on 1 January, December is the year before.
      expect((await writtenCopy('syslog-rfc3164.log')).time_range).toEqual({ start: '2025-12-31T23:58:01.000Z', end: '2026-01-01T00:02:08.000Z' });
      // The log's own latest dated line is the reference when there is one.
      const mixed = await analyse({
        content: lines('<11>Dec 31 23:59:58 web01 app[7]: payment 1 failed', '<11>Jan  1 00:00:03 web01 app[7]: payment 2 failed', '{"level":"info","time":"2024-01-01T00:05:00Z","msg":"rotated"}'),
      });
      expect(mixed.time_range).toEqual({ start: '2023-12-31T23:59:58.000Z', end: '2024-01-01T00:05:00.000Z' });
      expect(mixed.warnings).toEqual(["2 timestamp(s) carry no year (RFC 3164 syslog, Android logcat, klog): each was put in the latest year that places it at most a day after 2024-01-01T00:05:00.000Z, the log's latest dated line"]);
      // Inline text with no dated line: the call's time, said so.
      const inline = await analyse({ content: '<11>Mar  3 10:00:00 web01 app[7]: payment 3 failed' });
      expect(inline.warnings).toEqual([expect.stringContaining('the time of the call')]);
      const placed = Date.parse(String(inline.time_range?.start));
      expect(placed).toBeLessThanOrEqual(Date.now() + 86_400_000);
      expect(placed).toBeGreaterThan(Date.now() - 366 * 86_400_000);
    });

    it('finds an error spike in a yearless syslog', async () => {
      const quiet = (minute: number) => `<14>Feb  3 09:0${minute}:10 web01 app[7]: heartbeat ok`;
      const failing = (second: number) => `<11>Feb  3 09:03:${String(second).padStart(2, '0')} web01 app[7]: upstream 10.0.3.${second}:5432 refused connection`;
      const noisy = [0, 1, 2, 4, 5].map((minute) => [quiet(minute), `<11>Feb  3 09:0${minute}:20 web01 app[7]: retry budget low`]).flat();
      const result = await analyse({ content: lines(...noisy, ...[11, 12, 13, 14, 15, 16].map(failing), '{"time":"2024-02-03T09:06:00Z","level":"info","msg":"done"}') });
      expect(result.anomalies).toContainEqual(expect.objectContaining({ type: 'error_spike', minute: '2024-02-03T09:03:00.000Z', count: 6, median: 1 }));
    });

    it('reads long hostile lines of each layout in linear time', async () => {
      const spaces = ' '.repeat(150_000);
      const hostile = ['03-17 16:13:38.811  1702  2395 D', '<165>1 2024-05-01T10:00:00Z h a p m [x', 'I0501 10:00:00.123456 1 ', 'Oct 11 22:14:15 host', 'Information\t', '[Wed Oct 11 14:32:52 2000] [core:'];
      const started = Date.now();
      const result = await analyse({ content: lines(...hostile.map((prefix) => `${prefix}${spaces}x`)) });
      expect(result.parsed_lines).toBe(hostile.length);
      // A lazy logcat tag before optional spaces took minutes on 10,000 spaces.
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it("reads Python's default layout, logcat's brief one and syslog without a PRI", async () => {
      const result = await analyse({
        content: lines(
          'WARNING:root:disk almost full',
          'CRITICAL:app.db:connection pool exhausted',
          'E/BluetoothAdapter( 1702): getState() failed',
          'I/ActivityManager( 1702): Start proc com.example',
          'Jun 14 15:16:01 combo sshd(pam_unix)[19939]: authentication failure; logname= uid=0',
          '{"ts":"2024-06-14T15:16:05Z","msg":"done","v":0}',
        ),
      });
      expect(result.levels).toEqual({ trace: 0, debug: 0, info: 2, warn: 1, error: 1, fatal: 1, unknown: 1 });
      expect(result.error_groups.map((group) => [group.signature, group.level])).toEqual([
        ['connection pool exhausted', 'fatal'],
        ['getState() failed', 'error'],
      ]);
      expect(result.time_range).toEqual({ start: '2024-06-14T15:16:01.000Z', end: '2024-06-14T15:16:05.000Z' });
    });
  });

  it('detects the format of every line of a mixed log, from a workspace file', async () => {
    const result = await analyse({ path: 'mixed-app-log.txt' });
    expect(result).toMatchObject({ total_lines: 9, parsed_lines: 8 });
    expect(result.formats).toEqual({ json: 2, logfmt: 2, access: 2, plain: 2 });
    expect(result.levels).toEqual({ trace: 0, debug: 0, info: 3, warn: 1, error: 3, fatal: 1, unknown: 0 });
    expect(result.time_range).toEqual({ start: '2024-05-01T08:00:07.500Z', end: '2024-05-01T10:00:06.120Z' });
    expect(result.error_groups.map((g) => [g.signature, g.count, g.level])).toEqual([
      ['upstream <*> refused connection', 2, 'error'],
      ['DELETE <*> HTTP/<*> <*>', 1, 'error'],
      ['out of memory in worker <*>', 1, 'fatal'],
    ]);
    expect(result.error_groups[0]).toMatchObject({
      first_seen: '2024-05-01T10:00:01.250Z',
      last_seen: '2024-05-01T10:00:03.000Z',
      example: 'upstream 10.0.3.7:5432 refused connection',
    });
  });

  describe('error grouping', () => {
    it('groups messages that differ only in variable tokens', async () => {
      const variants = [
        ['42', '3f2a9c1e-5b7d-4e21-9a0c-1d2e3f4a5b6c', '10.0.0.1', 'ada@example.com', '"first"', '/var/data/a.json', 'deadbeefcafe'],
        ['7', '00000000-0000-4000-8000-000000000000', '192.168.7.254:8080', 'bob.smith+x@mail.example.org', "'second'", './tmp/b.json', '0x1F'],
      ];
      const content = variants
        .map(([n, uuid, ip, email, quoted, file, hex]) => `ERROR job ${n} (${uuid}) from ${ip} by ${email} failed on ${quoted} at ${file} [${hex}]`)
        .join('\n');
      const result = await analyse({ content });
      expect(result.error_groups).toHaveLength(1);
      expect(result.error_groups[0]).toMatchObject({
        signature: 'job <*> (<*>) from <*> by <*> failed on <*> at <*> [<*>]',
        count: 2,
      });
    });

    it('keeps different messages apart, sorts by count then signature, and cuts to max_groups', async () => {
      const content = lines('ERROR b failed', 'ERROR a failed', 'ERROR c failed 1', 'ERROR c failed 2', 'FATAL a failed');
      const all = await analyse({ content });
      expect(all.error_groups.map((g) => [g.signature, g.count, g.level])).toEqual([
        ['a failed', 2, 'fatal'],
        ['c failed <*>', 2, 'error'],
        ['b failed', 1, 'error'],
      ]);
      expect(all.truncated).toBe(false);
      const cut = await analyse({ content, max_groups: 2 });
      expect(cut.error_groups.map((g) => g.signature)).toEqual(['a failed', 'c failed <*>']);
      expect(cut.truncated).toBe(true);
    });

    it('truncates the example to 500 characters', async () => {
      const result = await analyse({ content: `ERROR ${'x'.repeat(800)}` });
      expect(result.error_groups[0].example).toBe('x'.repeat(500));
    });
  });

  describe('anomalies', () => {
    const minute = (m: number, s = 0) => `2024-05-01T10:0${m}:${String(s).padStart(2, '0')}Z`;

    it('flags a minute with errors far above the median, and errors seen once', async () => {
      const content = [
        ...[0, 1, 2, 3, 4].map((m) => `${minute(m)} ERROR retry budget low`),
        ...[0, 1, 2, 3, 4].map((m) => `${minute(m, 30)} INFO ok`),
        ...Array.from({ length: 6 }, (_, s) => `${minute(5, s)} ERROR retry budget low`),
        `${minute(5, 59)} ERROR disk on fire`,
      ].join('\n');
      const result = await analyse({ content });
      // errors per active minute: 1,1,1,1,1,7 -> median 1; 7 >= max(5, 3 x 1)
      expect(result.anomalies).toEqual([
        {
          type: 'error_spike',
          description: '7 errors in the minute from 2024-05-01T10:05:00.000Z, against a median of 1 per active minute',
          minute: '2024-05-01T10:05:00.000Z',
          count: 7,
          median: 1,
        },
        { type: 'rare_error', description: 'Error seen only once: disk on fire', count: 1, signature: 'disk on fire' },
      ]);
    });

    it('needs at least 5 errors and 3 active minutes for a spike', async () => {
      const fourInOneMinute = [
        ...[0, 1, 2].map((m) => `${minute(m)} INFO ok`),
        ...[1, 2, 3, 4].map((s) => `${minute(3, s)} ERROR same thing`),
      ].join('\n');
      expect((await analyse({ content: fourInOneMinute })).anomalies).toEqual([]);

      const twoMinutesOnly = [`${minute(0)} INFO ok`, ...[1, 2, 3, 4, 5, 6].map((s) => `${minute(1, s)} ERROR same thing`)];
      expect((await analyse({ content: twoMinutesOnly.join('\n') })).anomalies).toEqual([]);
    });
  });

  describe('bad input', () => {
    it.each([
      [{ content: 'x', path: 'mixed-app-log.txt' }, 'path', /give exactly one of 'content' or 'path'/],
      [{ path: '../log-analysis.tool.ts' }, 'path', /escapes the workspace/],
      [{ path: '/etc/passwd' }, 'path', /absolute/],
      [{ path: 'missing.log' }, 'path', /No such file or directory in the workspace: missing.log/],
    ])('%j is INVALID_INPUT naming %s', async (input, parameter, message) => {
      expect(await toolFailure(analyse(input))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter }, message: expect.stringMatching(message) });
    });

    it('neither content nor path is a missing parameter, refused before the tool runs', async () => {
      expect(await toolFailure(analyse({}))).toMatchObject({ code: 'INVALID_REQUEST', details: { parameter: 'content', expected: "exactly one of 'content' or 'path'" } });
    });
  });

  describe('cancellation and progress', () => {
    const bigLog = Array.from({ length: 36_000 }, (_, i) => `ERROR request ${i} failed`).join('\n');

    it('does nothing when the signal is already aborted', async () => {
      await expect(analyse({ content: 'INFO x' }, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    });

    it('stops mid-run when the signal aborts', async () => {
      const controller = new AbortController();
      const percents: number[] = [];
      setImmediate(() => controller.abort());
      await expect(analyse({ content: bigLog }, { signal: controller.signal, onProgress: (percent) => percents.push(percent) })).rejects.toMatchObject({ name: 'AbortError' });
      expect(percents.length).toBeLessThan(3);
    });

    it('reports progress a few times on a large input', async () => {
      const percents: number[] = [];
      const result = await analyse({ content: bigLog }, { onProgress: (percent) => percents.push(percent) });
      expect(result.error_groups[0]).toMatchObject({ signature: 'request <*> failed', count: 36_000 });
      expect(percents.length).toBeGreaterThanOrEqual(5);
      expect(percents.length).toBeLessThanOrEqual(10);
      expect(percents).toEqual([...percents].sort((a, b) => a - b));
      expect(percents.every((p) => p > 0 && p < 100)).toBe(true);
    });
  });
});
