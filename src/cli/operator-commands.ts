/**
 * Operator commands: accounts, any account's keys and secrets (`--account`), console sign-in
 * links. They run on the service's operator endpoint when the embedded service is running, on the
 * database otherwise (operator-client.ts). `keys` and `secrets` without `--account` are the
 * client commands of the caller's own account (client/account-commands.ts).
 */
import { randomBytes } from 'node:crypto';
import { Command, InvalidArgumentError, Option } from 'commander';
import { SCOPES, Scope } from '../identity/scopes';
import { generateSecret, KEY_TYPE_ALIASES } from '../identity/key-secret';
import { TIERS } from '../identity/tiers';
import { SECRET_NAME } from '../secrets/secret-name';
import type { OperatorAction } from '../operator/operator-actions';
import { clientKeys, clientSecrets } from './client/account-commands';
import { positiveInt, readStdin } from './client/commands';
import { examples } from './client/help';
import { addOutputOptions, emit, OutputOptions, View } from './client/output';
import { ACCOUNT_VIEW, KEY_VIEW, LINK_VIEW, SECRET_VIEW } from './client/views';
import { runOperatorAction } from './operator-client';

/** Runs an operator action (on the endpoint or the database) and prints its result. */
export async function operator(action: OperatorAction, args: Record<string, unknown>, view: View<never>, o: OutputOptions): Promise<void> {
  await emit(await runOperatorAction(action, args), view, o);
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

const accountOption = () => new Option('--account <name>', 'operator: this account (without it: your own account, over the API)');

/** Registers the operator commands; returns `keys` for the client-only key commands. */
export function registerOperatorCommands(program: Command): Command {
  const accounts = program.command('accounts').description('operator: create and list accounts');
  examples(
    addOutputOptions(
      accounts
        .command('create')
        .description('create an account (its first key: tos keys create --account NAME)')
        .requiredOption('--name <name>', 'unique account name')
        .addOption(new Option('--tier <tier>', 'plan').choices(TIERS).default('free'))
        .option('--requests-per-minute <n>', 'enterprise: own request rate', positiveInt)
        .option('--monthly-calls <n>', 'enterprise: own monthly call quota', positiveInt)
        .option('--retention-days <n>', 'enterprise: own execution retention', positiveInt)
        .option('--workspaces <n>', 'enterprise: own quota of live uploaded workspaces', positiveInt)
        .option('--workspace-bytes <n>', 'enterprise: own quota of bytes those workspaces store', positiveInt),
      ACCOUNT_VIEW,
    ),
    ['tos accounts create --name acme --tier pro', 'tos accounts create --name bigco --tier enterprise --requests-per-minute 50000'],
  ).action((o) =>
    operator(
      'accounts.create',
      {
        name: o.name,
        tier: o.tier,
        requests_per_minute: o.requestsPerMinute,
        monthly_calls: o.monthlyCalls,
        retention_days: o.retentionDays,
        workspaces: o.workspaces,
        workspace_bytes: o.workspaceBytes,
      },
      ACCOUNT_VIEW,
      o,
    ),
  );
  examples(addOutputOptions(accounts.command('list').description('every account'), ACCOUNT_VIEW), ['tos accounts list', 'tos accounts list --json name,tier']).action((o) =>
    operator('accounts.list', {}, ACCOUNT_VIEW, o),
  );

  const keys = program.command('keys').description("API keys: yours over the API, or any account's with --account (operator)");
  examples(
    addOutputOptions(
      keys
        .command('create')
        .description('issue a key; its secret is printed once')
        .addOption(accountOption())
        .requiredOption('--name <name>', 'label for the key')
        .addOption(new Option('--type <type>', 'key type').choices(Object.keys(KEY_TYPE_ALIASES)).default('service'))
        .option('--expires-in <seconds>', 'temporary keys: lifetime, at most 86400', positiveInt)
        .option('--scopes <list>', `comma-separated subset of ${SCOPES.join(',')}`, scopes)
        .option('--tool-ids <list>', 'comma-separated tool ids the key may use', list)
        .option('--require-signature', 'requests made with the key must be signed; its signing secret is printed once (docs/API.md#signed-requests)'),
      KEY_VIEW,
    ),
    ['tos keys create --account acme --name ci --type service', 'tos keys create --name reader --scopes tools:read,executions:read', "tos keys create --name ci --jq '.key'"],
  ).action((o) =>
    !o.account
      ? clientKeys.create(o)
      : operator('keys.create', { account: o.account, name: o.name, type: KEY_TYPE_ALIASES[o.type as keyof typeof KEY_TYPE_ALIASES], expires_in: o.expiresIn, scopes: o.scopes, tool_ids: o.toolIds, require_signature: o.requireSignature === true }, KEY_VIEW, o),
  );
  examples(keys.command('secret').description('print a fresh random secret to use as BOOTSTRAP_API_KEY (nothing is stored)'), ['BOOTSTRAP_API_KEY=$(tos keys secret) npm start'])
    .addOption(new Option('--type <type>', 'key type').choices(Object.keys(KEY_TYPE_ALIASES)).default('service'))
    .action((o) => {
      process.stdout.write(`${generateSecret(KEY_TYPE_ALIASES[o.type as keyof typeof KEY_TYPE_ALIASES])}\n`);
    });
  examples(addOutputOptions(keys.command('list').description('keys of the account, revoked ones included').addOption(accountOption()), KEY_VIEW), [
    'tos keys list',
    'tos keys list --account acme',
    'tos keys list --json id,name,revoked_at',
  ]).action((o) => (!o.account ? clientKeys.list(o) : operator('keys.list', { account: o.account }, KEY_VIEW, o)));
  examples(addOutputOptions(keys.command('revoke <key_id>').description('revoke a key at once').addOption(accountOption()), KEY_VIEW), [
    'tos keys revoke key_…',
    'tos keys revoke key_… --account acme',
  ]).action((keyId: string, o) => (!o.account ? clientKeys.revoke(keyId, o) : operator('keys.revoke', { account: o.account, key_id: keyId }, KEY_VIEW, o)));

  const secrets = program.command('secrets').description("an account's secrets, which tools read through ctx.secrets (values are write-only)");
  examples(
    addOutputOptions(
      secrets
        .command('set')
        .description('create or replace a secret; the value is read from stdin')
        .argument('<name>', 'secret name', secretName)
        .addOption(accountOption()),
      SECRET_VIEW,
    ),
    ['printf %s "$TOKEN" | tos secrets set DEPLOY_TOKEN', 'printf %s "$TOKEN" | tos secrets set DEPLOY_TOKEN --account acme'],
  ).action(async (name: string, o) => {
    const value = await readValue();
    return !o.account ? clientSecrets.set(name, value, o) : operator('secrets.set', { account: o.account, name, value }, SECRET_VIEW, o);
  });
  examples(addOutputOptions(secrets.command('list').description('secret names and dates (never values)').addOption(accountOption()), SECRET_VIEW), [
    'tos secrets list',
    'tos secrets list --account acme',
  ]).action((o) => (!o.account ? clientSecrets.list(o) : operator('secrets.list', { account: o.account }, SECRET_VIEW, o)));
  examples(addOutputOptions(secrets.command('delete').description('delete a secret').argument('<name>', 'secret name', secretName).addOption(accountOption())), [
    'tos secrets delete DEPLOY_TOKEN',
  ]).action((name: string, o) => (!o.account ? clientSecrets.delete(name, o) : operator('secrets.delete', { account: o.account, name }, {}, o)));
  examples(secrets.command('key').description('print a fresh random SECRETS_KEY (nothing is stored)'), ['SECRETS_KEY=$(tos secrets key) npm start']).action(() => {
    process.stdout.write(`${randomBytes(32).toString('base64')}\n`);
  });

  examples(
    addOutputOptions(
      program
        .command('console')
        .description('the browser console at /console')
        .command('link')
        .description("operator: print a one-time sign-in link for an account (valid CONSOLE_LINK_TTL_SECONDS; it starts with the running service's public URL)")
        .requiredOption('--account <name>', 'account name'),
      LINK_VIEW,
    ),
    ['tos console link --account acme'],
  ).action((o) => operator('console.link', { account: o.account }, LINK_VIEW, o));
  return keys;
}

