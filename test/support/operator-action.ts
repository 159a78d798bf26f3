import { AppException } from '../../src/common/errors';
import { AccountsService } from '../../src/keys/accounts.service';
import { ApiKeysService } from '../../src/keys/api-keys.service';
import { OPERATOR_ACTIONS, type OperatorAction } from '../../src/operator/operator-actions';
import { readOperatorFile } from '../../src/operator/operator-file';
import { SecretsService } from '../../src/secrets/secrets.service';
import { ConsoleSessions } from '../../src/sessions/console-sessions.service';
import { UpstreamsService } from '../../src/upstreams/upstreams.service';
import type { SuiteApp } from './app';

/**
 * An operator action as `tos` runs it: through the embedded service's operator endpoint (token
 * from DATA_DIR/operator.json), or with DATABASE_URL on the service's modules directly.
 */
export async function operator(suite: SuiteApp, action: OperatorAction, args: Record<string, unknown>): Promise<{ status: number; body: { result?: any; error?: any } }> {
  const endpoint = suite.env.DATA_DIR ? readOperatorFile(suite.env.DATA_DIR) : undefined;
  if (endpoint?.token) {
    const res = await fetch(`${endpoint.url}/operator/${action}`, { method: 'POST', headers: { authorization: `Bearer ${endpoint.token}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });
    return { status: res.status, body: (await res.json()) as { result?: any; error?: any } };
  }
  const app = suite.t.app;
  const services = { accounts: app.get(AccountsService), keys: app.get(ApiKeysService), secrets: app.get(SecretsService), consoleSessions: app.get(ConsoleSessions), upstreams: app.get(UpstreamsService), publicUrl: '' };
  try {
    return { status: 200, body: { result: await OPERATOR_ACTIONS[action](services, args) } };
  } catch (err) {
    if (err instanceof AppException) return { status: err.status, body: { error: err.body } };
    throw err;
  }
}
