/**
 * `tos login` (also `tos auth login`), `tos auth status` and `tos whoami`. Login asks the service
 * who the key is before it saves anything, so a typo never lands in a profile.
 */
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { Command, InvalidArgumentError } from 'commander';
import { ApiClient, ClientError, Connection, connectionFromEnv } from './api-client';
import { printClientError, readStdin } from './commands';
import { examples } from './help';
import { addOutputOptions, emit, OutputOptions, View, wantsJson } from './output';
import { saveProfile } from './profiles';
import { SIGNING_SECRET_PATTERN } from '../../identity/request-signature';

interface Identity {
  tier: string;
  key?: { id: string; type: string; account_id: string; scopes: string[]; expires_at: string | null };
  month: { used: number; limit: number | null };
}

const STATUS_VIEW: View = {
  fields: ['url', 'source', 'key_id', 'key_type', 'account_id', 'tier', 'scopes', 'expires_at'],
  text: (r) =>
    [
      `Logged in to ${r.url} as ${r.key_id ?? 'a valid key'}${r.key_type ? ` (${r.key_type} key)` : ''}`,
      `  account: ${r.account_id ?? '-'} (tier ${r.tier})`,
      `  scopes: ${Array.isArray(r.scopes) ? r.scopes.join(', ') : '-'}`,
      ...(r.expires_at ? [`  expires: ${r.expires_at}`] : []),
      `  from: ${r.source}`,
    ].join('\n') + '\n',
};

/** Who the service says the key is; a refused key is a ClientError naming the service's reason. */
async function identify(connection: Connection) {
  const usage = (await new ApiClient(connection).request('GET', '/v1/usage')) as Identity;
  return {
    url: connection.url,
    source: connection.source,
    key_id: usage.key?.id ?? null,
    key_type: usage.key?.type ?? null,
    account_id: usage.key?.account_id ?? null,
    tier: usage.tier,
    scopes: usage.key?.scopes ?? null,
    expires_at: usage.key?.expires_at ?? null,
  };
}

/** A key typed at a terminal is not echoed; piped in, it is read to the end. */
async function readKey(): Promise<string> {
  if (!process.stdin.isTTY) return readStdin();
  const { createInterface } = await import('node:readline');
  process.stderr.write('Paste your API key: ');
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  const rl = createInterface({ input: process.stdin, output: silent, terminal: true });
  const line = await new Promise<string>((resolve) => rl.question('', resolve));
  rl.close();
  process.stderr.write('\n');
  return line.trim();
}

/** A key that requires signed requests: its signing secret, read from a file so it never shows in a process list. */
function readSigningSecret(file: string | undefined): { signingSecret?: string } {
  if (file === undefined) return {};
  let signingSecret: string;
  try {
    signingSecret = readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new InvalidArgumentError(`cannot read the signing secret file: ${(err as Error).message}`);
  }
  if (!SIGNING_SECRET_PATTERN.test(signingSecret)) throw new InvalidArgumentError(`${file} does not hold a signing secret (sk_sig_ followed by 32 letters or digits)`);
  return { signingSecret };
}

async function login(program: Command, o: OutputOptions & { url: string; signingSecretFile?: string }): Promise<void> {
  const signing = readSigningSecret(o.signingSecretFile);
  const apiKey = await readKey();
  if (!apiKey) throw new InvalidArgumentError('the API key read from stdin is empty');
  const profile = program.opts<{ profile?: string }>().profile || process.env.TOS_PROFILE || 'default';
  const connection = { url: o.url.replace(/\/+$/, ''), apiKey, ...signing, source: `profile "${profile}"` };
  try {
    const who = await identify(connection);
    const file = saveProfile(profile, { url: connection.url, api_key: apiKey, ...(signing.signingSecret ? { signing_secret: signing.signingSecret } : {}) });
    await emit({ ...who, source: `profile "${profile}" (${file})` }, STATUS_VIEW, o);
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    printClientError(new ClientError(err.code, `${err.message} (nothing saved)`, err.suggestion ?? 'check the key and --url', err.exitCode), wantsJson(o));
  }
}

async function status(o: OutputOptions): Promise<void> {
  try {
    await emit(await identify(connectionFromEnv()), STATUS_VIEW, o);
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    printClientError(err, wantsJson(o));
  }
}

export function registerAuthCommands(program: Command): void {
  const loginCommand = (command: Command) =>
    examples(
      addOutputOptions(
        command
          .description('check an API key against the service, then save it as a profile (the key is read from stdin, or typed without echo)')
          .requiredOption('--url <url>', 'service URL')
          .option('--signing-secret-file <file>', "for a key that requires signed requests: a file holding its signing secret, saved in the profile (every request is then signed)"),
        STATUS_VIEW,
      ),
      ['tos login --url http://127.0.0.1:3000', 'printf %s "$TOS_API_KEY" | tos login --url https://tos.example.com', 'printf %s "$KEY" | tos login --url https://tos.example.com --signing-secret-file ./signing-secret', 'printf %s "$KEY" | tos --profile staging login --url https://staging.example.com'],
    ).action((o) => login(program, o));
  loginCommand(program.command('login'));
  const auth = program.command('auth').description('log in and see which key and account you are using');
  loginCommand(auth.command('login'));
  const statusCommand = (command: Command, description: string) =>
    examples(addOutputOptions(command.description(description), STATUS_VIEW), ['tos auth status', 'tos whoami --json key_id,account_id']).action((o) => status(o));
  statusCommand(auth.command('status'), 'the service, key, account, tier and scopes in use, checked against the service (exit 1 when the key is refused)');
  statusCommand(program.command('whoami'), 'the key and account in use (same as tos auth status)');
}
