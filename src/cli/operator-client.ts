/**
 * Where an operator command runs. In embedded mode a running service holds the data directory:
 * the command goes to that service's operator endpoint (loopback, token from DATA_DIR/operator.json;
 * see docs/operator-endpoint.md), which answers in a fraction of a second. Otherwise, and always
 * with DATABASE_URL, the command opens the database itself (a few seconds: it boots the modules).
 */
import { isAlive } from '../common/process-alive';
import type { OperatorAction } from '../operator/operator-actions';
import { readOperatorFile } from '../operator/operator-file';
import { ClientError, EXIT } from './client/api-client';

/** Runs the action where it can run, and returns its result. */
export async function runOperatorAction(action: OperatorAction, args: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): Promise<unknown> {
  const running = env.DATABASE_URL ? undefined : readOperatorFile(env.DATA_DIR || './data');
  if (running?.url && running.token && running.pid && isAlive(running.pid)) {
    const answered = await viaEndpoint(running.url, running.token, action, args);
    if (answered.reached) return answered.result;
  }
  return (await import('./operator')).runOperatorDirectly(action, args);
}

async function viaEndpoint(url: string, token: string, action: OperatorAction, args: Record<string, unknown>): Promise<{ reached: boolean; result?: unknown }> {
  let response: Response;
  try {
    response = await fetch(`${url}/operator/${action}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });
  } catch {
    return { reached: false }; // a service that died without cleaning up: open the database instead
  }
  const body = (await response.json().catch(() => ({}))) as { result?: unknown; error?: { code?: string; message?: string; suggestion?: string } };
  if (!response.ok) throw new ClientError(body.error?.code ?? `HTTP_${response.status}`, body.error?.message ?? `the service answered ${response.status}`, body.error?.suggestion, EXIT.error);
  return { reached: true, result: body.result };
}
