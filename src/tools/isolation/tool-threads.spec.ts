import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { AppConfig } from '../../config/app-config';
import type { ToolContextParts } from '../context/tool-context';
import { createWorkspace } from '../workspace';
import { ToolThreads } from './tool-threads';

const BUSY_TOOL = { file: path.join(__dirname, '../../../test/support/isolated-tools/busy.tool.ts'), exportName: 'BusyIsolatedTool' };
const FILE_WRITER = { file: path.join(__dirname, '../../../test/support/confinement/file-writer.tool.ts'), exportName: 'FileWriterIsolatedTool' };

describe('ToolThreads', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'tool-threads-'));
  const threads = new ToolThreads({ TOOL_THREADS: 1 } as AppConfig);
  afterAll(async () => {
    await threads.onModuleDestroy();
    rmSync(root, { recursive: true, force: true });
  });

  const parts = (executionId: string, progress: ToolContextParts['progress'], logs: string[]): ToolContextParts => ({
    executionId,
    signal: new AbortController().signal,
    progress,
    logger: { debug: () => undefined, info: (message) => logs.push(message), warn: () => undefined, error: () => undefined },
    config: {},
    workspace: createWorkspace(root),
    egress: { allow: '' },
    accountId: null,
  });

  it("relays each thread message once to its own call, however many calls the pool has run", async () => {
    for (let call = 1; call <= 4; call++) {
      const progress: number[] = [];
      const logs: string[] = [];
      await expect(threads.run(BUSY_TOOL, { spin_ms: 5 }, parts(`exec_${call}`, (percent) => progress.push(percent), logs))).resolves.toEqual({ spun_ms: 5 });
      expect({ call, progress, logs }).toEqual({ call, progress: [50], logs: ['spinning'] });
    }
  }, 60_000);

  it('runs tools where no file can be written: a write past every SDK check is refused by the permission model', async () => {
    const canary = path.join(root, 'written-by-a-tool');
    await expect(threads.run(FILE_WRITER, { path: canary }, parts('exec_writer', () => undefined, []))).rejects.toThrow('Access to this API has been restricted');
    expect(existsSync(canary)).toBe(false);
  }, 60_000);
});
