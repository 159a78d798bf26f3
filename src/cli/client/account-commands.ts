/**
 * Client halves of `tos keys` and `tos secrets`: without --account they run against the service
 * with the caller's own key (the operator halves are in ../operator-commands.ts).
 */
import { Command } from 'commander';
import { id, listed, runClient } from './commands';
import { examples } from './help';
import { addOutputOptions, OutputOptions } from './output';
import { KEY_VIEW, SECRET_VIEW } from './views';

export interface KeyCreateOptions extends OutputOptions {
  name: string;
  type: string;
  expiresIn?: number;
  scopes?: string[];
  toolIds?: string[];
  requireSignature?: boolean;
}

export const clientKeys = {
  list: (o: OutputOptions) =>
    runClient(o, KEY_VIEW, (c) => listed(c, '/v1/keys', new URLSearchParams(), 'keys', { paginate: true })),
  create: (o: KeyCreateOptions) =>
    runClient(o, KEY_VIEW, async (c) => ({
      result: await c.request('POST', '/v1/keys', { body: { name: o.name, type: o.type, expires_in: o.expiresIn, scopes: o.scopes, tool_ids: o.toolIds, require_signature: o.requireSignature } }),
    })),
  revoke: (keyId: string, o: OutputOptions) => runClient(o, KEY_VIEW, async (c) => ({ result: await c.request('DELETE', `/v1/keys/${id(keyId)}`) })),
};

export const clientSecrets = {
  set: (name: string, value: string, o: OutputOptions) => runClient(o, SECRET_VIEW, async (c) => ({ result: await c.request('PUT', `/v1/secrets/${id(name)}`, { body: { value } }) })),
  list: (o: OutputOptions) => runClient(o, SECRET_VIEW, async (c) => ({ result: ((await c.request('GET', '/v1/secrets')) as { secrets: unknown[] }).secrets })),
  delete: (name: string, o: OutputOptions) =>
    runClient(o, {}, async (c) => {
      await c.request('DELETE', `/v1/secrets/${id(name)}`);
      return { result: { deleted: name } };
    }),
};

/** Client-only key commands: rotate and regenerate exist only over the API. */
export function registerClientKeyCommands(keys: Command): void {
  examples(
    addOutputOptions(
      keys
        .command('rotate <key_id>')
        .description('issue a successor key; the old one keeps working for the grace period')
        .option('--revoke-old-after <seconds>', 'how long the old key keeps working'),
      KEY_VIEW,
    ),
    ['tos keys rotate key_… --revoke-old-after 3600'],
  ).action((keyId: string, o) =>
    runClient(o, KEY_VIEW, async (c) => ({
      result: await c.request('POST', `/v1/keys/${id(keyId)}/rotate`, { body: o.revokeOldAfter === undefined ? {} : { revoke_old_after: Number(o.revokeOldAfter) } }),
    })),
  );
  examples(addOutputOptions(keys.command('regenerate <key_id>').description('replace the secret of a user key at once'), KEY_VIEW), ['tos keys regenerate key_…']).action(
    (keyId: string, o) => runClient(o, KEY_VIEW, async (c) => ({ result: await c.request('POST', `/v1/keys/${id(keyId)}/regenerate`) })),
  );
}
