/**
 * Client halves of `tos keys` and `tos secrets`. The operator commands (main.ts) open the database
 * and need --account; without --account these run against TOS_URL with the caller's own key.
 */
import { Command } from 'commander';
import { outputOption, runClient } from './commands';

export { outputOption };

const id = (value: string) => encodeURIComponent(value);

export interface KeyCreateOptions {
  name: string;
  type: string;
  expiresIn?: number;
  scopes?: string[];
  toolIds?: string[];
  output?: 'json' | 'text';
}

export const clientKeys = {
  list: (output: 'json' | 'text' = 'text') => runClient(output, async (c) => ({ result: await c.request('GET', '/v1/keys') })),
  create: (o: KeyCreateOptions) =>
    runClient(o.output ?? 'text', async (c) => ({
      result: await c.request('POST', '/v1/keys', { body: { name: o.name, type: o.type, expires_in: o.expiresIn, scopes: o.scopes, tool_ids: o.toolIds } }),
    })),
  revoke: (keyId: string, output: 'json' | 'text' = 'text') => runClient(output, async (c) => ({ result: await c.request('DELETE', `/v1/keys/${id(keyId)}`) })),
};

export const clientSecrets = {
  set: (name: string, value: string, output: 'json' | 'text' = 'text') => runClient(output, async (c) => ({ result: await c.request('PUT', `/v1/secrets/${id(name)}`, { body: { value } }) })),
  list: (output: 'json' | 'text' = 'text') => runClient(output, async (c) => ({ result: await c.request('GET', '/v1/secrets') })),
  delete: (name: string, output: 'json' | 'text' = 'text') =>
    runClient(output, async (c) => {
      await c.request('DELETE', `/v1/secrets/${id(name)}`);
      return { result: { deleted: name } };
    }),
};

/** Client-only key commands: rotate and regenerate exist only over the API. */
export function registerClientKeyCommands(keys: Command): void {
  keys
    .command('rotate <key_id>')
    .description('client: issue a successor key; the old one keeps working for the grace period')
    .option('--revoke-old-after <seconds>', 'how long the old key keeps working')
    .addOption(outputOption())
    .action((keyId: string, o) =>
      runClient(o.output, async (c) => ({
        result: await c.request('POST', `/v1/keys/${id(keyId)}/rotate`, { body: o.revokeOldAfter === undefined ? {} : { revoke_old_after: Number(o.revokeOldAfter) } }),
      })),
    );
  keys
    .command('regenerate <key_id>')
    .description('client: replace the secret of a key at once')
    .addOption(outputOption())
    .action((keyId: string, o) => runClient(o.output, async (c) => ({ result: await c.request('POST', `/v1/keys/${id(keyId)}/regenerate`) })));
}
