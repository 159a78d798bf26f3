import { Logger } from '@nestjs/common';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { AppConfig } from '../../config/app-config';
import type { ToolContextParts } from '../context/tool-context';
import { ToolError } from '../sdk';
import { createWorkspace } from '../workspace';
import { ToolThreads } from './tool-threads';

const TOOLS = path.join(__dirname, '../../../test/support/isolated-tools');
const BUSY_TOOL = { file: path.join(TOOLS, 'busy.tool.ts'), exportName: 'BusyIsolatedTool' };
const MEMORY_HOG = { file: path.join(TOOLS, 'memory-hog.tool.ts'), exportName: 'MemoryHogIsolatedTool' };
const FILE_WRITER = { file: path.join(__dirname, '../../../test/support/confinement/file-writer.tool.ts'), exportName: 'FileWriterIsolatedTool' };

describe('ToolThreads', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'tool-threads-'));
  const pools: ToolThreads[] = [];
  const pool = (config: Partial<AppConfig>) => {
    const threads = new ToolThreads({ TOOL_THREAD_MAX_MEMORY_MB: 512, ...config } as AppConfig);
    pools.push(threads);
    return threads;
  };
  afterAll(async () => {
    await Promise.all(pools.map((threads) => threads.onModuleDestroy()));
    rmSync(root, { recursive: true, force: true });
  });

  interface Call {
    accountId?: string | null;
    signal?: AbortSignal;
    progress?: ToolContextParts['progress'];
    logs?: string[];
  }
  const parts = (executionId: string, call: Call = {}): ToolContextParts => ({
    executionId,
    signal: call.signal ?? new AbortController().signal,
    progress: call.progress ?? (() => undefined),
    logger: { debug: () => undefined, info: (message) => call.logs?.push(message), warn: () => undefined, error: () => undefined },
    config: {},
    workspace: createWorkspace(root),
    egress: { allow: '' },
    accountId: call.accountId ?? null,
  });

  /** Starts a call that spins until aborted; resolves once it is spinning in its thread. */
  async function hog(threads: ToolThreads, executionId: string, accountId: string | null = null) {
    const stop = new AbortController();
    let spinning!: () => void;
    const started = new Promise<void>((resolve) => (spinning = resolve));
    const run = threads.run(BUSY_TOOL, { spin_ms: 60_000 }, parts(executionId, { accountId, signal: stop.signal, progress: () => spinning() }));
    run.catch(() => undefined);
    await started;
    return { run, stop: () => stop.abort(new Error('stopped by the test')) };
  }

  it('relays each thread message once to its own call, however many calls the pool has run', async () => {
    const threads = pool({ TOOL_THREADS: 1 });
    for (let call = 1; call <= 4; call++) {
      const progress: number[] = [];
      const logs: string[] = [];
      await expect(threads.run(BUSY_TOOL, { spin_ms: 5 }, parts(`exec_${call}`, { progress: (percent) => progress.push(percent), logs }))).resolves.toEqual({ spun_ms: 5 });
      expect({ call, progress, logs }).toEqual({ call, progress: [50], logs: ['spinning'] });
    }
  }, 60_000);

  it('runs a call queued behind a call whose thread was terminated (TOOL_THREADS=1)', async () => {
    const threads = pool({ TOOL_THREADS: 1 });
    const first = await hog(threads, 'exec_hog');
    const queued = threads.run(BUSY_TOOL, { spin_ms: 0 }, parts('exec_queued'));
    first.stop();
    await expect(first.run).rejects.toThrow('aborted');
    // Before the fix this call stayed queued until its own timeout (the test's).
    await expect(queued).resolves.toEqual({ spun_ms: 0 });
  }, 30_000);

  it("serves another account's call while one account's calls hold its share of the threads", async () => {
    const threads = pool({ TOOL_THREADS: 2, TOOL_THREADS_PER_ACCOUNT: 1 });
    const hostile = await hog(threads, 'exec_a1', 'acc_a');
    let secondStarted = false;
    const second = threads.run(BUSY_TOOL, { spin_ms: 1 }, parts('exec_a2', { accountId: 'acc_a', progress: () => (secondStarted = true) }));
    await expect(threads.run(BUSY_TOOL, { spin_ms: 0 }, parts('exec_b1', { accountId: 'acc_b' }))).resolves.toEqual({ spun_ms: 0 });
    // The free thread went to account B although account A asked for it first.
    expect(secondStarted).toBe(false);
    hostile.stop();
    await expect(second).resolves.toEqual({ spun_ms: 1 });
  }, 30_000);

  it('ends a call that outgrows its thread heap with a ToolError naming the limit, and keeps serving', async () => {
    const threads = pool({ TOOL_THREADS: 1, TOOL_THREAD_MAX_MEMORY_MB: 256 });
    const failure = await threads.run(MEMORY_HOG, { megabytes: 4096 }, parts('exec_oom')).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ToolError);
    expect(failure).toMatchObject({ code: 'INVALID_INPUT', retryable: false, details: { memory_limit_mb: 256 } });
    expect((failure as ToolError).message).toContain('256 MB');
    await expect(threads.run(MEMORY_HOG, { megabytes: 1 }, parts('exec_after'))).resolves.toEqual({ held_mb: 1 });
  }, 60_000);

  it('runs tools where no file can be written: a write past every SDK check is refused by the permission model', async () => {
    const canary = path.join(root, 'written-by-a-tool');
    await expect(pool({ TOOL_THREADS: 1 }).run(FILE_WRITER, { path: canary }, parts('exec_writer'))).rejects.toThrow('Access to this API has been restricted');
    expect(existsSync(canary)).toBe(false);
  }, 60_000);

  it('survives a call that makes V8 abort its process: the call ends TOOL_ERROR (retryable), the host starts again', async () => {
    const threads = pool({ TOOL_THREADS: 1, TOOL_THREAD_MAX_MEMORY_MB: 64 });
    const warned = jest.spyOn(Logger.prototype, 'warn');
    const failure = await threads.run(MEMORY_HOG, { megabytes: 1024, at_once: true }, parts('exec_abort')).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ToolError);
    expect(failure).toMatchObject({ code: 'TOOL_ERROR', retryable: true, message: expect.stringContaining("The isolated tools' process ended") });
    await expect(threads.run(MEMORY_HOG, { megabytes: 1 }, parts('exec_next'))).resolves.toEqual({ held_mb: 1 });
    // V8's report reached the service's log as lines of its own, not the service's stderr.
    expect(warned.mock.calls.map(([line]) => line)).toContainEqual(expect.stringMatching(/^\[ToolHost stderr\] FATAL ERROR: .*heap out of memory/));
    warned.mockRestore();
  }, 60_000);
});
