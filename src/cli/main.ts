#!/usr/bin/env node
/**
 * `tos`: the operator CLI for accounts and first keys (DESIGN §5.4), and the API client (docs/cli.md).
 * Only what parses the command line loads up front: the operator runtime (Nest, the database) and
 * the MCP bridge load when a command needs them, so client commands start in a fraction of the time.
 */
import { Command, CommanderError } from 'commander';
import { ClientError, EXIT } from './client/api-client';
import { printClientError, registerClientCommands } from './client/commands';
import { registerClientKeyCommands } from './client/account-commands';
import { COMPLETE_COMMAND, completions, registerCompletion } from './completion';
import { registerOperatorCommands } from './operator-commands';
import { packageVersion } from './version';

const program = new Command('tos')
  .description(
    'Tool Orchestration Service CLI. Client commands talk to a running service (tos login, or TOS_URL and TOS_API_KEY); operator commands (accounts, console, --account) manage any account (DATA_DIR or DATABASE_URL).',
  )
  .version(packageVersion(), '-V, --version', 'print the version')
  .showSuggestionAfterError();
// Usage errors exit 2, apart from the codes client commands use for outcomes (docs/cli.md).
program.exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : EXIT.usage));
const keys = registerOperatorCommands(program);
registerClientCommands(program);
registerClientKeyCommands(keys);
registerCompletion(program);

/** Failures whose message is the whole story (no stack): a bad setting, a refused request (told by name, so no Nest loads to tell). */
const EXPECTED = new Set(['AppException', 'ConfigError']);
const asksJson = (argv: string[]) => argv.some((arg) => arg === '--json' || arg.startsWith('--json=') || arg === '--jq' || arg === 'json');

function fail(err: unknown): void {
  if (err instanceof ClientError) return printClientError(err, asksJson(process.argv));
  if (err instanceof CommanderError) {
    process.stderr.write(`tos: ${err.message.replace(/^error: /, '')}\n`);
    process.exit(EXIT.usage);
  }
  const message = err instanceof Error && EXPECTED.has(err.name) ? err.message : err instanceof Error ? err.stack : String(err);
  process.stderr.write(`tos: ${message}\n`);
  process.exit(EXIT.error);
}

if (process.argv[2] === COMPLETE_COMMAND) {
  // Asked by the completion scripts: the words are not parsed as options (that is the point).
  process.stdout.write(completions(program, process.argv.slice(3)).map((line) => `${line}\n`).join(''));
} else {
  program.parseAsync().catch(fail);
}
