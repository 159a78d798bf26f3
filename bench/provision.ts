import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..');

/**
 * An enterprise account whose request limit is far above what a 2-core run can send, and a service
 * key of it — made with the operator CLI (compiled), before the service starts, as an operator would.
 */
export function provisionBenchKey(env: NodeJS.ProcessEnv, account = 'bench'): string {
  const cli = (...args: string[]) => execFileSync(process.execPath, ['dist/src/cli/main.js', ...args], { cwd: ROOT, env, encoding: 'utf8' });
  cli('accounts', 'create', '--name', account, '--tier', 'enterprise', '--requests-per-minute', '1000000000');
  return (JSON.parse(cli('keys', 'create', '--account', account, '--name', account, '--type', 'service', '--json')) as { key: string }).key;
}
