import * as path from 'node:path';
import { Logger } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { isAlive } from '../common/process-alive';
import { StdioSupervisor } from './stdio-supervisor';

const ROOT = path.join(__dirname, '..', '..');
const SECRET = 'tok-secret-1234';
/** A stdio MCP server that is noisy on stderr: its secret, one very long line, a flood of lines. */
const NOISY = `
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
console.error('starting with token ' + process.env.TOKEN);
console.error('x'.repeat(5000));
for (let i = 0; i < 200; i++) console.error('line ' + i);
new McpServer({ name: 'noisy', version: '1' }).connect(new StdioServerTransport());
`;

describe('the stdio supervisor', () => {
  const config = { UPSTREAMS_STDIO: 'true', UPSTREAMS_STDIO_CONCURRENCY: 2, UPSTREAMS_STDIO_IDLE_SECONDS: 600 } as AppConfig;
  const start = async () => ({ process: { command: process.execPath, args: ['-e', NOISY], env: { TOKEN: SECRET }, cwd: ROOT }, secretValues: [SECRET] });
  const upstream = { id: 'up_noisy', name: 'noisy' };

  it('logs stderr masked and bounded, and leaves no process after shutdown', async () => {
    const logged: string[] = [];
    const spy = jest.spyOn(Logger.prototype, 'log').mockImplementation((message: unknown) => void logged.push(String(message)));
    const supervisor = new StdioSupervisor(config);
    try {
      expect(await supervisor.use(upstream, start, new AbortController().signal, async (client) => client.getServerVersion()?.name)).toBe('noisy');
      const pid = supervisor.pidOf(upstream.id)!;
      expect(isAlive(pid)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const stderr = logged.filter((line) => line.startsWith('[noisy stderr]'));
      expect(stderr[0]).toBe('[noisy stderr] starting with token [secret]');
      expect(logged.join('\n')).not.toContain(SECRET);
      expect(Math.max(...stderr.map((line) => line.length))).toBeLessThanOrEqual('[noisy stderr] '.length + 501);
      expect(stderr.length).toBe(60);
      await supervisor.onApplicationShutdown();
      expect(isAlive(pid)).toBe(false);
      expect(supervisor.pidOf(upstream.id)).toBeNull();
    } finally {
      await supervisor.onApplicationShutdown();
      spy.mockRestore();
    }
  }, 30_000);

  it('waits out a backoff after a failed start, and shutdown does not wait for it', async () => {
    const supervisor = new StdioSupervisor(config);
    const dies = async () => ({ process: { command: process.execPath, args: ['-e', 'process.exit(3)'], env: {} }, secretValues: [] });
    const signal = new AbortController().signal;
    await expect(supervisor.use(upstream, dies, signal, async () => 1)).rejects.toThrow(/could not be started/);
    const retried = supervisor.use(upstream, dies, signal, async () => 1);
    const failed = expect(retried).rejects.toThrow(/shutting down/);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closing = Date.now();
    await supervisor.onApplicationShutdown();
    await failed;
    expect(Date.now() - closing).toBeLessThan(500);
    await expect(supervisor.use(upstream, dies, signal, async () => 1)).rejects.toThrow(/shutting down/);
  });

  it('refuses every call while UPSTREAMS_STDIO is off, starting nothing', async () => {
    const supervisor = new StdioSupervisor({ ...config, UPSTREAMS_STDIO: 'false' } as AppConfig);
    const started = jest.fn(start);
    await expect(supervisor.use(upstream, started, new AbortController().signal, async () => 1)).rejects.toThrow(/UPSTREAMS_STDIO/);
    expect(started).not.toHaveBeenCalled();
  });
});
