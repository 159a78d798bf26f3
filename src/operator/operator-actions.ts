/**
 * What an operator may do (accounts, any account's keys and secrets, console sign-in links,
 * upstreams only the operator may register: stdio servers, shared ones), as one
 * table of named actions. The CLI runs them on the database it opens, or asks the running service
 * to run them through its operator endpoint: the same code either way.
 */
import { AppException } from '../common/errors';
import type { KeyType } from '../identity/key-secret';
import type { Scope } from '../identity/scopes';
import type { Tier } from '../identity/tiers';
import { AccountsService } from '../keys/accounts.service';
import { ApiKeysService } from '../keys/api-keys.service';
import { keyView } from '../keys/key-view';
import { SecretsService } from '../secrets/secrets.service';
import { ConsoleSessions } from '../sessions/console-sessions.service';
import { auditFilterOf, operatorUpstreamOf } from '../upstreams/upstream-fields';
import type { UpstreamsService } from '../upstreams/upstreams.service';

export interface OperatorServices {
  accounts: AccountsService;
  keys: ApiKeysService;
  secrets: SecretsService;
  consoleSessions: ConsoleSessions;
  /** Loaded for the upstreams actions only (needsUpstreams). */
  upstreams?: UpstreamsService;
  /** Where the service is reached: console links start with it. */
  publicUrl: string;
}

type Args = Record<string, unknown>;

/** A required string argument; the endpoint's callers are local operators, but a wrong shape is still a 400, not a crash. */
function text(args: Args, name: string): string {
  const value = args[name];
  if (typeof value !== 'string' || value === '') throw AppException.invalidRequest(`${name} must be a non-empty string`, { parameter: name });
  return value;
}

const numberOrNull = (value: unknown) => (typeof value === 'number' ? value : null);

export const OPERATOR_ACTIONS = {
  'accounts.create': (s: OperatorServices, a: Args) =>
    s.accounts.create({
      name: text(a, 'name'),
      tier: text(a, 'tier') as Tier,
      requests_per_minute: numberOrNull(a.requests_per_minute),
      monthly_calls: numberOrNull(a.monthly_calls),
      retention_days: numberOrNull(a.retention_days),
      workspaces: numberOrNull(a.workspaces),
      workspace_bytes: numberOrNull(a.workspace_bytes),
    }),
  'accounts.list': (s: OperatorServices) => s.accounts.list(),
  'keys.create': async (s: OperatorServices, a: Args) => {
    const account = await s.accounts.findByName(text(a, 'account'));
    const issued = await s.keys.create(account.id, {
      name: text(a, 'name'),
      type: text(a, 'type') as KeyType,
      expires_in: typeof a.expires_in === 'number' ? a.expires_in : undefined,
      scopes: Array.isArray(a.scopes) ? (a.scopes as Scope[]) : undefined,
      tool_ids: Array.isArray(a.tool_ids) ? (a.tool_ids as string[]) : null,
      require_signature: a.require_signature === true,
    });
    const signing = issued.signingSecret ? { signing_secret: issued.signingSecret } : {};
    return { ...keyView(issued.record), key: issued.secret, ...signing, note: `Store this key${issued.signingSecret ? ' and its signing secret' : ''} now: ${issued.signingSecret ? 'they are' : 'it is'} shown only once.` };
  },
  'keys.list': async (s: OperatorServices, a: Args) => {
    const account = await s.accounts.findByName(text(a, 'account'));
    return (await s.keys.list(account.id, 100, 0)).keys.map(keyView);
  },
  'keys.revoke': async (s: OperatorServices, a: Args) => keyView(await s.keys.revoke((await s.accounts.findByName(text(a, 'account'))).id, text(a, 'key_id'))),
  'secrets.set': async (s: OperatorServices, a: Args) => {
    const account = await s.accounts.findByName(text(a, 'account'));
    const { created, ...view } = await s.secrets.set(account.id, text(a, 'name'), text(a, 'value'));
    return { ...view, created };
  },
  'secrets.list': async (s: OperatorServices, a: Args) => s.secrets.list((await s.accounts.findByName(text(a, 'account'))).id),
  'secrets.delete': async (s: OperatorServices, a: Args) => {
    await s.secrets.delete((await s.accounts.findByName(text(a, 'account'))).id, text(a, 'name'));
    return { deleted: text(a, 'name') };
  },
  'console.link': async (s: OperatorServices, a: Args) => {
    const link = await s.consoleSessions.createLink((await s.accounts.findByName(text(a, 'account'))).id, null);
    return { ...link, url: `${s.publicUrl}${link.path}` };
  },
  'upstreams.add': async (s: OperatorServices, a: Args) => upstreamsOf(s).createByOperator(operatorUpstreamOf((await s.accounts.findByName(text(a, 'account'))).id, a)),
  'upstreams.remove': async (s: OperatorServices, a: Args) => {
    await upstreamsOf(s).deleteByOperator((await s.accounts.findByName(text(a, 'account'))).id, text(a, 'name'));
    return { deleted: text(a, 'name') };
  },
  'upstreams.audit': async (s: OperatorServices, a: Args) => {
    const limit = typeof a.limit === 'number' && Number.isInteger(a.limit) && a.limit >= 1 && a.limit <= 100 ? a.limit : 50;
    const accountId = a.account === undefined ? null : (await s.accounts.findByName(text(a, 'account'))).id;
    const upstreamId = a.upstream === undefined ? undefined : text(a, 'upstream');
    return (await upstreamsOf(s).operatorAuditLog(accountId, auditFilterOf(a, upstreamId), limit, 0)).events;
  },
} as const;

function upstreamsOf(s: OperatorServices): UpstreamsService {
  if (!s.upstreams) throw new Error('the upstreams service is not loaded for this action');
  return s.upstreams;
}

export type OperatorAction = keyof typeof OPERATOR_ACTIONS;

export const isOperatorAction = (name: string): name is OperatorAction => Object.hasOwn(OPERATOR_ACTIONS, name);

/** Which actions need the tool catalogue loaded (a key's tool_ids are checked against it). */
export const needsTools = (action: OperatorAction, args: Args): boolean => action === 'keys.create' && Array.isArray(args.tool_ids);

/** Which actions need the upstreams service (it brings the tool catalogue and the stdio supervisor). */
export const needsUpstreams = (action: OperatorAction): boolean => action.startsWith('upstreams.');
