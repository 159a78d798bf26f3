/**
 * git as the workspaces run it: no shell, no user or system configuration, no prompts, bounded
 * in time and output, and refs passed after `--end-of-options` so none can read as an option.
 */
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';

export class GitFailed extends Error {}

export function git(args: readonly string[], options: { cwd: string; timeoutMs: number; maxBytes: number }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      [...args],
      {
        cwd: options.cwd,
        timeout: options.timeoutMs,
        maxBuffer: options.maxBytes,
        encoding: 'buffer',
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir(), GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', LANG: 'C' },
      },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const lines = stderr.toString('utf8').trim().split('\n');
        const said = (lines.find((line) => line.startsWith('fatal:')) ?? lines[0] ?? '').replace(/^fatal: /, '');
        reject(new GitFailed(error.killed ? `git took longer than ${options.timeoutMs / 1000}s` : said || error.message));
      },
    );
  });
}
