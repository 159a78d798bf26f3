#!/usr/bin/env node
/**
 * `tos`: the operator CLI for accounts and first keys (DESIGN §5.4), and the API client. Prints JSON.
 * Only what parses the command line loads up front: the operator runtime (Nest, the database) and
 * the MCP bridge load when a command needs them, so client commands start in a fraction of the time.
 */
import { randomBytes } from 'node:crypto';
import { Command, InvalidArgumentError, Option } from 'commander';
import { SCOPES, Scope } from '../identity/scopes';
import { generateSecret, KEY_TYPE_ALIASES } from '../identity/key-secret';
import { keyView } from '../keys/key-view';
import { TIERS } from '../identity/tiers';
import { SECRET_NAME } from '../secrets/secret-name';
import { outputOption, readStdin, registerClientCommands } from './client/commands';
import { clientKeys, clientSecrets, registerClientKeyCommands } from './client/account-commands';
import type { OperatorOptions, Services } from './operator';

const run = async (action: (services: Services) => Promise<unknown>, options?: OperatorOptions): Promise<void> => (await import('./operator')).runOperator(action, options);

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive whole number');
  return n;
}

function list(value: string): string[] {
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

function scopes(value: string): Scope[] {
  const items = list(value);
  const bad = items.find((s) => !(SCOPES as readonly string[]).includes(s));
  if (bad) throw new InvalidArgumentError(`unknown scope '${bad}' (known: ${SCOPES.join(', ')})`);
  return items as Scope[];
}

const program = new Command('tos').description('Tool Orchestration Service CLI: operator commands (DATABASE_URL or DATA_DIR) and client commands (TOS_URL and TOS_API_KEY, or a profile)');
// Usage errors exit 2, apart from the codes client commands use for outcomes (docs/readme-cli-client.md).
program.exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));
const accounts = program.command('accounts').description('manage accounts');
accounts
  .command('create')
  .requiredOption('--name <name>', 'unique account name')
  .addOption(new Option('--tier <tier>', 'plan').choices(TIERS).default('free'))
  .option('--requests-per-minute <n>', 'enterprise: own request rate', positiveInt)
  .option('--monthly-calls <n>', 'enterprise: own monthly call quota', positiveInt)
  .option('--retention-days <n>', 'enterprise: own execution retention', positiveInt)
  .option('--workspaces <n>', 'enterprise: own quota of live uploaded workspaces', positiveInt)
  .option('--workspace-bytes <n>', 'enterprise: own quota of bytes those workspaces store', positiveInt)
  .action((o) =>
    run(({ accounts: svc }) =>
      svc.create({
        name: o.name,
        tier: o.tier,
        requests_per_minute: o.requestsPerMinute ?? null,
        monthly_calls: o.monthlyCalls ?? null,
        retention_days: o.retentionDays ?? null,
        workspaces: o.workspaces ?? null,
        workspace_bytes: o.workspaceBytes ?? null,
      }),
    ),
  );
accounts.command('list').action(() => run(({ accounts: svc }) => svc.list()));

const keys = program.command('keys').description('manage API keys');
keys
  .command('create')
  .option('--account <name>', 'operator: account name (without it: client mode on TOS_URL)')
  .requiredOption('--name <name>', 'label for the key')
  .addOption(new Option('--type <type>', 'key type').choices(Object.keys(KEY_TYPE_ALIASES)).default('service'))
  .option('--expires-in <seconds>', 'temporary keys: lifetime, at most 86400', positiveInt)
  .option('--scopes <list>', `comma-separated subset of ${SCOPES.join(',')}`, scopes)
  .option('--tool-ids <list>', 'comma-separated tool ids the key may use', list)
  .addOption(outputOption())
  .action((o) =>
    !o.account ? clientKeys.create(o) : run(async ({ accounts: acc, keys: svc }) => {
      const account = await acc.findByName(o.account);
      const issued = await svc.create(account.id, { name: o.name, type: KEY_TYPE_ALIASES[o.type], expires_in: o.expiresIn, scopes: o.scopes, tool_ids: o.toolIds ?? null });
      return { ...keyView(issued.record), key: issued.secret, note: 'Store this key now: it is shown only once.' };
    }, { tools: o.toolIds !== undefined }),
  );
keys
  .command('secret')
  .description('print a fresh random secret to use as BOOTSTRAP_API_KEY (nothing is stored)')
  .addOption(new Option('--type <type>', 'key type').choices(Object.keys(KEY_TYPE_ALIASES)).default('service'))
  .action((o) => {
    process.stdout.write(`${generateSecret(KEY_TYPE_ALIASES[o.type])}\n`);
  });
keys
  .command('list')
  .option('--account <name>', 'operator: account name (without it: client mode on TOS_URL)')
  .addOption(outputOption())
  .action((o) =>
    !o.account ? clientKeys.list(o.output) : run(async ({ accounts: acc, keys: svc }) => {
      const account = await acc.findByName(o.account);
      const { keys: rows, total } = await svc.list(account.id, 100, 0);
      return { keys: rows.map(keyView), total };
    }),
  );
keys
  .command('revoke <key_id>')
  .option('--account <name>', 'operator: account name (without it: client mode on TOS_URL)')
  .addOption(outputOption())
  .action((keyId: string, o) =>
    !o.account ? clientKeys.revoke(keyId, o.output) : run(async ({ accounts: acc, keys: svc }) => keyView(await svc.revoke((await acc.findByName(o.account)).id, keyId))),
  );

function secretName(value: string): string {
  if (!SECRET_NAME.test(value)) throw new InvalidArgumentError('1 to 64 letters, digits, _, . or -');
  return value;
}

/** The value from stdin, so it never lands in shell history or the process list; one trailing newline dropped. */
async function readValue(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('Type the value, then Enter and Ctrl-D:\n');
  const value = await readStdin();
  if (!value) throw new InvalidArgumentError('the value read from stdin is empty');
  return value;
}

const secrets = program.command('secrets').description("manage an account's secrets, which tools read through ctx.secrets (values are write-only)");
secrets
  .command('set')
  .description('create or replace a secret; the value is read from stdin (printf %s "$TOKEN" | tos secrets set …)')
  .argument('<name>', 'secret name', secretName)
  .option('--account <name>', 'operator: account name (without it: client mode on TOS_URL)')
  .addOption(outputOption())
  .action(async (name: string, o) =>
    !o.account ? clientSecrets.set(name, await readValue(), o.output) : run(async ({ accounts: acc, secrets: svc }) => {
      const account = await acc.findByName(o.account);
      const { created, ...view } = await svc.set(account.id, name, await readValue());
      return { ...view, created };
    }),
  );
secrets
  .command('list')
  .option('--account <name>', 'operator: account name (without it: client mode on TOS_URL)')
  .addOption(outputOption())
  .action((o) => !o.account ? clientSecrets.list(o.output) : run(async ({ accounts: acc, secrets: svc }) => ({ secrets: await svc.list((await acc.findByName(o.account)).id) })));
secrets
  .command('delete')
  .argument('<name>', 'secret name', secretName)
  .option('--account <name>', 'operator: account name (without it: client mode on TOS_URL)')
  .addOption(outputOption())
  .action((name: string, o) =>
    !o.account ? clientSecrets.delete(name, o.output) : run(async ({ accounts: acc, secrets: svc }) => {
      await svc.delete((await acc.findByName(o.account)).id, name);
      return { deleted: name };
    }),
  );
secrets
  .command('key')
  .description('print a fresh random SECRETS_KEY (nothing is stored)')
  .action(() => {
    process.stdout.write(`${randomBytes(32).toString('base64')}\n`);
  });

program
  .command('console')
  .description('the browser console at /console')
  .command('link')
  .description('print a one-time sign-in link for an account (valid CONSOLE_LINK_TTL_SECONDS; the URL starts with PUBLIC_URL)')
  .requiredOption('--account <name>', 'account name')
  .action((o) => run(async ({ accounts: acc, consoleSessions }) => consoleSessions.createLink((await acc.findByName(o.account)).id, null)));

registerClientCommands(program);
registerClientKeyCommands(keys);

program.parseAsync().catch(async (err: unknown) => {
  const { isExpectedFailure } = await import('./operator');
  const message = isExpectedFailure(err) ? err.message : err instanceof Error ? err.stack : String(err);
  process.stderr.write(`tos: ${message}\n`);
  process.exit(1);
});
