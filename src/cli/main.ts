#!/usr/bin/env node
/**
 * `tos`: the operator CLI for accounts and first keys (README "Getting a first key"), and the API client (docs/cli.md).
 * Only what parses the command line loads up front: the operator runtime (Nest, the database) and
 * the MCP bridge load when a command needs them, so client commands start in a fraction of the time.
 */
import { CommanderError } from 'commander';
import { ClientError, EXIT } from './client/api-client';
import { printClientError } from './client/commands';
import { COMPLETE_COMMAND, completions } from './completion';
import { buildProgram } from './program';

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

const program = buildProgram();
if (process.argv[2] === COMPLETE_COMMAND) {
  // Asked by the completion scripts: the words are not parsed as options (that is the point).
  process.stdout.write(completions(program, process.argv.slice(3)).map((line) => `${line}\n`).join(''));
} else {
  program.parseAsync().catch(fail);
}
