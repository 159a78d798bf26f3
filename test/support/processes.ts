import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';

const ENTRY = path.join(__dirname, 'worker-main.ts');

export interface ServiceProcess {
  child: ChildProcess;
  /** Everything it printed, for failure messages. */
  output(): string;
  /** Resolves once it exits: its exit code, or the signal that ended it. */
  exited: Promise<number | NodeJS.Signals | null>;
}

/** A real service process (ts-node) in the given role; resolves once it logged that it is ready. */
export async function startServiceProcess(role: 'api' | 'worker' | 'all', env: Record<string, string>, timeoutMs = 60_000): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', ENTRY, '--role', role], {
    env: { ...process.env, NODE_OPTIONS: '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  await new Promise<void>((resolve, reject) => {
    // One that never got ready is stopped (the exit below then rejects), not left behind writing to the test's data directory.
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('ready in')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      const why = timedOut ? `did not start in ${timeoutMs} ms` : `exited with ${code} before it was ready`;
      reject(new Error(`service process ${why}:\n${output}`));
    });
  });
  return { child, output: () => output, exited };
}

/** Stops a process for good (SIGKILL) and waits for it. */
export async function killProcess(p: ServiceProcess | undefined): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGKILL');
  await p.exited;
}
