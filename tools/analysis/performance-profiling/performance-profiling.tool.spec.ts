import { runTool, toolFailure, type RunToolOverrides } from '@tos/sdk/testing';
import { startRecordingServer, type RecordingServer } from '../../../test/support/recording-server';
import { PerformanceProfilingTool } from './performance-profiling.tool';

type Profile = Awaited<ReturnType<PerformanceProfilingTool['execute']>>;
const profile = (input: Record<string, unknown>, overrides: RunToolOverrides = {}) => runTool<Profile>(PerformanceProfilingTool, input, overrides);

describe('performance-profiling', () => {
  let target: RecordingServer;
  beforeAll(async () => {
    target = await startRecordingServer(({ url }) => (url === '/broken' ? { status: 500, body: 'no' } : { status: 200, body: '{"status":"ok"}' }));
  });
  beforeEach(() => target.clear());
  afterAll(() => target.close());

  it('loads the target for the duration and reports rate, latency and statuses, with progress', async () => {
    const progress: number[] = [];
    const out = await profile({ url: `${target.url}/healthz`, connections: 4, duration_seconds: 2, headers: { authorization: 'Bearer probe' } }, { onProgress: (p) => progress.push(p) });
    expect(out.status_counts['2xx']).toBeGreaterThan(50);
    expect(out).toMatchObject({ non_2xx: 0, errors: 0, timeouts: 0 });
    expect(out.requests_total).toBe(out.status_counts['2xx']);
    expect(target.received.length).toBeGreaterThanOrEqual(out.requests_total);
    expect(target.received[0].headers).toMatchObject({ authorization: 'Bearer probe', host: new URL(target.url).host });
    expect(out.latency_ms.p99).toBeGreaterThanOrEqual(out.latency_ms.p50!);
    expect(out.duration_seconds).toBeGreaterThanOrEqual(1.9);
    expect(progress.length).toBeGreaterThanOrEqual(1);
  });

  it('reports the mean per-second rate of answered requests and response bytes, not 0', async () => {
    const out = await profile({ url: `${target.url}/`, connections: 2, duration_seconds: 2 });
    expect(out.requests_total).toBeGreaterThan(20);
    // One sample a second over a 2 s run: the mean rate is the total over about two seconds.
    expect(out.requests_per_second).toBeGreaterThan(out.requests_total / 3);
    expect(out.requests_per_second).toBeLessThanOrEqual(out.requests_total);
    // Every answer carries the same 15-byte body and its headers: more bytes than requests, a fixed multiple of them.
    expect(out.throughput_bytes_per_second).toBeGreaterThan(15 * out.requests_per_second);
    expect(out.throughput_bytes_per_second / out.requests_per_second).toBeLessThan(1000);
  });

  it('holds the requested rate (autocannon paces per second, so a 2 s run sees two or three of them)', async () => {
    const out = await profile({ url: `${target.url}/`, connections: 2, duration_seconds: 2, rate: 20 });
    expect(out.requests_total).toBeGreaterThanOrEqual(20);
    expect(out.requests_total).toBeLessThanOrEqual(60);
  });

  it('reports a failing endpoint and an unreachable one as what the load met', async () => {
    await expect(profile({ url: `${target.url}/broken`, connections: 1, duration_seconds: 1 })).resolves.toMatchObject({ status_counts: { '2xx': 0 }, errors: 0 });
    const broken = await profile({ url: `${target.url}/broken`, connections: 1, duration_seconds: 1 });
    expect(broken.non_2xx).toBe(broken.status_counts['5xx']);
    expect(broken.non_2xx).toBeGreaterThan(0);
    const dead = await profile({ url: 'http://127.0.0.1:1/', connections: 1, duration_seconds: 1 });
    expect(dead.errors).toBeGreaterThan(0);
    expect(dead.requests_total).toBe(0);
  });

  it.each([
    [{ url: 'ftp://127.0.0.1/' }, 'url'],
    [{ url: 'http://127.0.0.1/', connections: 101 }, 'connections'],
    [{ url: 'http://127.0.0.1/', duration_seconds: 61 }, 'duration_seconds'],
    [{ url: 'http://127.0.0.1/', rate: 0 }, 'rate'],
  ])('%j is refused naming %s', async (input, parameter) => {
    expect(await toolFailure(profile(input))).toMatchObject({ details: { parameter } });
  });

  it('refuses a target the egress policy refuses, before any request', async () => {
    expect(await toolFailure(profile({ url: `${target.url}/`, duration_seconds: 1 }, { egressAllow: '' }))).toMatchObject({
      code: 'INVALID_INPUT',
      details: { parameter: 'url', expected: 'a public address' },
    });
    expect(target.received).toEqual([]);
  });

  it('stops the load at once when cancelled', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('cancelled')), 500);
    const started = Date.now();
    await expect(profile({ url: `${target.url}/`, connections: 4, duration_seconds: 30 }, { signal: controller.signal })).rejects.toThrow('cancelled');
    expect(Date.now() - started).toBeLessThan(2000);
    const seen = target.received.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(target.received.length - seen).toBeLessThanOrEqual(4);
  });
});
