import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import type { ExecOptions, ExecResult, Workspace } from '../sdk/context';
import { ToolError } from '../sdk/tool-error';

const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * ctx.exec: no shell, cwd inside the workspace, none of the service's environment, output capped
 * per stream, the whole process group killed on abort or timeout.
 */
export function createExec(workspace: Workspace, signal: AbortSignal) {
  return async (command: string, args: readonly string[], options: ExecOptions = {}): Promise<ExecResult> => {
    const cwd = await workspace.resolve(options.cwd ?? '.', 'cwd');
    const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    signal.throwIfAborted();
    return new Promise<ExecResult>((resolve, reject) => {
      const child = spawn(command, [...args], {
        cwd,
        env: { PATH: process.env.PATH ?? DEFAULT_PATH, HOME: tmpdir(), LANG: 'C.UTF-8', ...options.env },
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let truncated = false;
      const collect = () => {
        const chunks: Buffer[] = [];
        let size = 0;
        return {
          push(chunk: Buffer) {
            if (size >= maxBytes) return void (truncated = true);
            if (size + chunk.length > maxBytes) truncated = true;
            chunks.push(chunk.subarray(0, maxBytes - size));
            size += chunk.length;
          },
          text: () => Buffer.concat(chunks).toString('utf8'),
        };
      };
      const stdout = collect();
      const stderr = collect();
      child.stdout.on('data', stdout.push);
      child.stderr.on('data', stderr.push);
      let timedOut = false;
      const killGroup = () => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      };
      const timer = options.timeoutMs ? setTimeout(() => ((timedOut = true), killGroup()), options.timeoutMs) : undefined;
      signal.addEventListener('abort', killGroup, { once: true });
      const cleanup = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', killGroup);
      };
      child.once('error', (err: NodeJS.ErrnoException) => {
        cleanup();
        reject(new ToolError(`Could not run '${command}': ${err.code ?? err.message}`, { details: { command } }));
      });
      child.once('close', (code, killedBy) => {
        cleanup();
        if (signal.aborted) return reject(signal.reason);
        if (timedOut) return reject(new ToolError(`'${command}' did not finish within ${options.timeoutMs} ms`, { retryable: true, details: { command } }));
        resolve({ code, signal: killedBy, stdout: stdout.text(), stderr: stderr.text(), truncated });
      });
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.input ?? undefined);
    });
  };
}
