import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { freePort } from './free-port';

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

/** A JSON request with the service's key: its status and parsed body. */
export type ServiceCall = (method: string, url: string, body?: unknown) => Promise<{ status: number; body: Record<string, any> }>;

/**
 * An embedded service process (`all`, PGlite) whose data and workspace live under `dir`, with the
 * enterprise bootstrap key `apiKey`, on a free loopback port; `call` sends requests with that key.
 */
export async function startEmbeddedService(dir: string, apiKey: string, env: Record<string, string> = {}): Promise<{ service: ServiceProcess; call: ServiceCall }> {
  const port = await freePort();
  const service = await startServiceProcess('all', {
    DATA_DIR: path.join(dir, 'data'),
    WORKSPACE_ROOT: path.join(dir, 'workspace'),
    BOOTSTRAP_API_KEY: apiKey,
    BOOTSTRAP_TIER: 'enterprise',
    PORT: String(port),
    ...env,
  });
  const call: ServiceCall = async (method, url, body) => {
    const res = await fetch(`http://127.0.0.1:${port}${url}`, { method, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  return { service, call };
}
